import { expect, test } from '@playwright/test';

test('adds a todo from the form', async ({ page }) => {
  await page.goto('/');
  await page.getByLabel('Title').fill('Water the plants');
  await page.getByRole('button', { name: 'Add' }).click();
  await expect(page.getByRole('listitem').filter({ hasText: 'Water the plants' })).toBeVisible();
  await expect(page.getByLabel('Title')).toHaveValue('');
});

test('shows the error of an empty title', async ({ page }) => {
  await page.goto('/');
  await page.getByRole('button', { name: 'Add' }).click();
  await expect(page.getByRole('alert')).toHaveText('title is required');
});

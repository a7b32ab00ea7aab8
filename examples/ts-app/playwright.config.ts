import { defineConfig } from '@playwright/test';

// Not the server's default port, so a running `npm start` or an api-check does not collide.
const port = Number(process.env.E2E_PORT ?? 3001);

export default defineConfig({
  testDir: 'e2e',
  timeout: 30_000,
  workers: 1,
  reporter: [['list'], ['json', { outputFile: '.sprintflow/reports/playwright.json' }]],
  outputDir: '.sprintflow/test-results',
  use: {
    baseURL: `http://127.0.0.1:${port}`,
    browserName: 'chromium',
    // The system Chromium: browser downloads (`npx playwright install`) are not possible here.
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: ['--no-sandbox', '--headless', '--disable-gpu', '--disable-dev-shm-usage'],
    },
  },
  webServer: {
    command: 'node --enable-source-maps dist/server.js',
    url: `http://127.0.0.1:${port}/health`,
    env: { PORT: String(port) },
    reuseExistingServer: false,
    timeout: 15_000,
  },
});

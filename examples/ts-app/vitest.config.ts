import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Test locations (file:line) in the JSON report, for the evaluator's feedback.
    includeTaskLocation: true,
  },
});

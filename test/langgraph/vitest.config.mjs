// vitest settings for LangGraph's checkpointer validation suite (a vitest library), run by scripts/test-langgraph.mjs.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/langgraph/**/*.vitest.ts'],
    globals: true,
    testTimeout: 60_000,
    hookTimeout: 180_000,
    pool: 'forks',
    fileParallelism: false,
  },
});

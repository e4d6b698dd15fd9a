// The logic lives in plain modules (src/model.ts, src/format.ts) that import nothing of
// JupyterLab, so ts-jest runs them without transforming JupyterLab's ES modules.
module.exports = {
  preset: 'ts-jest',
  testEnvironment: 'node',
  testMatch: ['<rootDir>/test/**/*.test.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.test.json' }] }
};

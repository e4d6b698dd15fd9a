// The logic lives in plain modules (src/model.ts, src/format.ts; widgets/src/format.ts,
// formRules.ts, galleryRules.ts) that import nothing of JupyterLab nor touch the DOM, so
// ts-jest runs them in Node without transforming JupyterLab's ES modules.
module.exports = {
  preset: 'ts-jest',
  testEnvironment: 'node',
  testMatch: ['<rootDir>/test/**/*.test.ts', '<rootDir>/widgets/test/**/*.test.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.test.json' }] }
};

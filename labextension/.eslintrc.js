module.exports = {
  root: true,
  parser: '@typescript-eslint/parser',
  parserOptions: {
    project: ['tsconfig.json', 'tsconfig.test.json', 'widgets/tsconfig.json'],
    sourceType: 'module',
    tsconfigRootDir: __dirname
  },
  plugins: ['@typescript-eslint'],
  extends: ['eslint:recommended', 'plugin:@typescript-eslint/recommended', 'prettier'],
  rules: {
    '@typescript-eslint/no-explicit-any': 'error',
    '@typescript-eslint/no-floating-promises': 'error',
    eqeqeq: 'error',
    'no-console': 'error'
  },
  overrides: [
    {
      // The widgets' views: `x == null` is how they test "no value from the kernel" (null or
      // undefined alike).
      files: ['widgets/**/*.ts'],
      rules: { eqeqeq: ['error', 'smart'] }
    }
  ],
  ignorePatterns: ['lib/', 'node_modules/', '*.js', '*.mjs']
};

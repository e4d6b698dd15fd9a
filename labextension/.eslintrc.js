module.exports = {
  root: true,
  parser: '@typescript-eslint/parser',
  parserOptions: { project: ['tsconfig.json', 'tsconfig.test.json'], sourceType: 'module', tsconfigRootDir: __dirname },
  plugins: ['@typescript-eslint'],
  extends: ['eslint:recommended', 'plugin:@typescript-eslint/recommended', 'prettier'],
  rules: {
    '@typescript-eslint/no-explicit-any': 'error',
    '@typescript-eslint/no-floating-promises': 'error',
    eqeqeq: 'error',
    'no-console': 'error'
  },
  ignorePatterns: ['lib/', 'node_modules/', '*.js']
};

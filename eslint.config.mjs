// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/node_modules/**', '**/dist/**', 'libs/proto/src/gen/**', 'data/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['@ledgerline/*/src/*', '../../libs/*', '../../apps/*'],
              message: 'Import a package through its public index.',
            },
            {
              // Apps talk over gRPC and the bus; what two apps share is a lib.
              group: ['@ledgerline/metadata', '@ledgerline/cli'],
              message: 'No package imports an app: move what is shared into a lib.',
            },
          ],
        },
      ],
    },
  },
  {
    // Reasons are constants: a program branches on them, so a typo must fail
    // to compile instead of silently never matching. Use the raising package's
    // reason object (ErrorReason, NamingErrorReason, LedgerStoreReason ...).
    files: ['**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        ...[
          "NewExpression[callee.name='LedgerlineError'] > .arguments:nth-child(2):matches(Literal, TemplateLiteral)",
          "CallExpression[callee.name='invalidArgument'] > .arguments:first-child:matches(Literal, TemplateLiteral)",
          "CallExpression[callee.object.name='LedgerlineError'][callee.property.name=/^(is|from)$/] > .arguments:nth-child(2):matches(Literal, TemplateLiteral)",
          "BinaryExpression[operator=/^[!=]==?$/][left.property.name='reason'] > Literal.right[value=/./]",
          "BinaryExpression[operator=/^[!=]==?$/][right.property.name='reason'] > Literal.left[value=/./]",
          "SwitchStatement[discriminant.property.name='reason'] > SwitchCase > Literal.test",
        ].map((selector) => ({
          selector,
          message: 'A reason is a constant: use the reason object of the package that raises it, not a string literal.',
        })),
      ],
    },
  },
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    languageOptions: {
      globals: {
        module: 'writable',
        require: 'readonly',
        process: 'readonly',
        __dirname: 'readonly',
        console: 'readonly',
      },
    },
  },
  {
    // The `ledgerline` bin shim is plain CommonJS: it loads tsx and the TypeScript entry with require().
    files: ['apps/cli/bin/*.js'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);

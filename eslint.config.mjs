// @ts-check
import js from '@eslint/js';
import nx from '@nx/eslint-plugin';
import tseslint from 'typescript-eslint';

/** Imports every file may not make: another package's insides, or an app. */
const packageBoundaries = [
  {
    group: ['@ledgerline/*/src/*', '../../libs/*', '../../apps/*', '../../e2e/*'],
    message: 'Import a package through its public index.',
  },
  {
    // Apps talk over gRPC and the bus; what two apps share is a lib.
    group: ['@ledgerline/metadata', '@ledgerline/cli', '@ledgerline/garbage-collector-app'],
    message: 'No package imports an app: move what is shared into a lib.',
  },
];

/** Test support: the `testing` lib, any lib's `/testing` subpath, a package's own `src/testing/` folder. */
const testingEntries = {
  group: ['@ledgerline/testing', '@ledgerline/*/testing', '**/testing', '**/testing/**'],
  message: 'Production code never imports test support; it lives behind /testing for tests only.',
};

/** The arrows of docs/architecture.md, by the tags in each package.json's `nx` field. */
const depConstraints = [
  // Apps are entry points: they use libs, never another app.
  { sourceTag: 'type:app', onlyDependOnLibsWithTags: ['type:lib'] },
  // No lib imports an app.
  { sourceTag: 'type:lib', onlyDependOnLibsWithTags: ['type:lib'] },
  // The test rig (e2e/) uses libs and other rig packages; nothing outside e2e/ may import it.
  { sourceTag: 'type:e2e', onlyDependOnLibsWithTags: ['type:lib', 'type:e2e'] },
  // The floors of docs/architecture.md ("Libraries by floor"): a lib imports its own floor or a lower
  // one, never a higher (tests included; libs/testing, kind:testing, stands beside the floors).
  ...[1, 2, 3, 4, 5].map((floor) => ({
    sourceTag: `floor:${floor}`,
    onlyDependOnLibsWithTags: ['kind:testing', ...Array.from({ length: floor }, (_, below) => `floor:${below + 1}`)],
  })),
  // Pure libs import no I/O lib: only each other, the generated contracts and (in tests) the test harness.
  { sourceTag: 'kind:pure', onlyDependOnLibsWithTags: ['kind:pure', 'kind:contract', 'kind:testing'] },
  { sourceTag: 'kind:contract', onlyDependOnLibsWithTags: ['kind:contract'] },
  // Two kinds of owner over one ownership library: neither owner imports the other, and the
  // library imports neither. (The read-only owner's side is a file rule below, readOnlyOwnerFiles:
  // its specs start a writer owner, and the project graph Nx checks here counts spec imports.)
  { sourceTag: 'scope:writer-owner', notDependOnLibsWithTags: ['scope:readonly-owner'] },
  { sourceTag: 'scope:ownership', notDependOnLibsWithTags: ['scope:writer-owner', 'scope:readonly-owner'] },
];

/** Files that ship: everything under a package's src/ but tests and test support. */
const productionFiles = ['libs/*/src/**/*.ts', 'apps/*/src/**/*.ts'];
const testFiles = ['**/*.spec.ts', '**/src/testing/**', 'libs/testing/**'];
/** The test rig: run by tests and by hand, shipped in no app. */
const rigFiles = ['e2e/*/src/**/*.ts'];

export default tseslint.config(
  { ignores: ['**/node_modules/**', '**/dist/**', 'libs/proto/src/gen/**', 'data/**', 'coverage/**', '.nx/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: {
      // Type information for the rules that need it; each file is checked
      // against the tsconfig.json nearest to it (its project's).
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { '@nx': nx },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      // A promise nobody awaits must say what happens when it rejects, even when marked `void`.
      '@typescript-eslint/no-floating-promises': ['error', { ignoreVoid: false }],
      'no-restricted-imports': ['error', { patterns: packageBoundaries }],
      // The arrows of docs/architecture.md ("The arrows and how they are enforced"), by the tags in each
      // package.json's `nx` field (depConstraints above).
      '@nx/enforce-module-boundaries': ['error', { allow: [], depConstraints }],
    },
  },
  {
    files: productionFiles,
    ignores: testFiles,
    rules: {
      'no-restricted-imports': ['error', { patterns: [...packageBoundaries, testingEntries] }],
    },
  },
  {
    // The test rig's sources under e2e/ too.
    files: [...productionFiles, ...rigFiles],
    ignores: testFiles,
    rules: {
      // Files that read in one sitting: a file over 400 lines (as wc -l counts) or a function over 70
      // lines of code holds more than one responsibility. Generated code is ignored above; specs and
      // test support are not bound.
      'max-lines': ['error', { max: 400, skipBlankLines: false, skipComments: false }],
      'max-lines-per-function': ['error', { max: 70, skipBlankLines: true, skipComments: true }],
    },
  },
  {
    // A read-only owner serves what a writer owner wrote, so its specs and their harness
    // (src/testing/) start a writer owner in process; its production code, and its app's, may not
    // import one. A file rule, not a tag constraint: Nx's constraint follows the project graph,
    // where those specs make the read-only owner's lib depend on the writer owner's.
    files: ['libs/readonly-owner/src/**/*.ts', 'apps/readonly-owner/src/**/*.ts'],
    ignores: testFiles,
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            ...packageBoundaries,
            testingEntries,
            {
              group: ['@ledgerline/writer-owner', '@ledgerline/writer-owner/*'],
              message: 'The read-only owner never imports the writer owner: both build on @ledgerline/ownership.',
            },
          ],
        },
      ],
    },
  },
  {
    // Only the metadata service's packages use the metadata store at runtime;
    // everyone else reaches metadata over gRPC (a type-only import is fine).
    files: productionFiles,
    ignores: [...testFiles, 'libs/metadata-store/**', 'libs/metadata-service/**', 'apps/metadata/**', 'apps/cli/**'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: '@ledgerline/metadata-store',
              allowTypeImports: true,
              message: 'Only the metadata service uses the metadata store at runtime; others call its gRPC API.',
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
    // The `ledgerline` bin shim and Jest's sequencer are plain CommonJS, loaded with require().
    files: ['apps/cli/bin/*.js', 'jest.sequencer.js'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);

// Lints for defects, not for looks (Prettier owns the layout): type-aware rules that catch promises
// nobody awaits, values that are not what their types say, and switches that miss a case.
import js from '@eslint/js';
import { defineConfig, globalIgnores } from 'eslint/config';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default defineConfig(
  globalIgnores(['dist/', 'coverage/', 'test/fixtures/']),
  // A disable comment that no longer silences anything fails the run, so none outlives its reason.
  { linterOptions: { reportUnusedDisableDirectives: 'error' } },
  js.configs.recommended,
  {
    files: ['**/*.ts'],
    extends: [tseslint.configs.strictTypeChecked],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      '@typescript-eslint/prefer-nullish-coalescing': 'error',
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      'no-template-curly-in-string': 'error',
      'no-self-compare': 'error',
      'no-constructor-return': 'error',
      // An abort signal's reason is `any`; rejecting with it is how the platform's own APIs end on abort.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingAny: true, allowThrowingUnknown: true }],
      // Numbers in messages are meant; objects, undefined and booleans in them are not.
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true }],
      '@typescript-eslint/no-unused-vars': ['error', { varsIgnorePattern: '^_' }],
      // `let x; const f = () => x?.y(); x = make(f)`: as a const, a call of f before the assignment would throw.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      // A lock's state changes across every await and callers may be plain JavaScript, so checks the
      // types call unnecessary are how this code stays safe (`held.state !== 'held'` after a write,
      // a missing option from an untyped caller); the rule would ask to delete them.
      '@typescript-eslint/no-unnecessary-condition': 'off',
      // Style, not defects: `!` after a bounds check (noUncheckedIndexedAccess), `async` fakes that
      // return at once, `() => void x` shorthands, `=== true` on Node's isTTY (undefined, typed boolean).
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/no-confusing-void-expression': 'off',
      '@typescript-eslint/no-meaningless-void-operator': 'off',
      '@typescript-eslint/no-unnecessary-boolean-literal-compare': 'off',
      // DynamoDB items are records keyed by attribute name; deleting one is the operation.
      '@typescript-eslint/no-dynamic-delete': 'off',
      // Test helpers hand out objects of closures, declared with method syntax; destructuring them is safe.
      '@typescript-eslint/unbound-method': 'off',
    },
  },
  {
    // Classes are what src/ passes methods of; a method passed without its `this` fails only at run time.
    files: ['src/**/*.ts'],
    rules: { '@typescript-eslint/unbound-method': 'error' },
  },
  {
    // Compiled or run against the packed package by integration/package.test.ts; here 'dynamodb-lock' does not resolve.
    files: ['scripts/consumer-app/**/*.ts'],
    extends: [tseslint.configs.disableTypeChecked],
  },
  {
    files: ['**/*.{js,mjs,cjs}'],
    languageOptions: { globals: globals.node },
  },
);

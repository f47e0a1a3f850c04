// One lint and format tool: ESLint with typescript-eslint's type-aware rules and @stylistic
// for layout (`npm run format` applies its fixes). Biome was tried first; its per-platform
// binaries leave a lockfile that `npm ci` rejects when the registry lacks some platforms.
import js from "@eslint/js";
import stylistic from "@stylistic/eslint-plugin";
import globals from "globals";
import tseslint from "typescript-eslint";

export default tseslint.config(
  // The Open Responses compliance suite is vendored unmodified (its README says from where).
  { ignores: ["dist/", "node_modules/", "coverage/", "bench/scratch/", "test/fixtures/openresponses/"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    plugins: { "@stylistic": stylistic },
    rules: {
      "@stylistic/quotes": ["error", "double", { avoidEscape: true }],
      "@stylistic/semi": ["error", "always"],
      "@stylistic/comma-dangle": ["error", "always-multiline"],
      "@stylistic/max-len": ["error", { code: 130, ignoreStrings: true, ignoreTemplateLiterals: true, ignoreRegExpLiterals: true, ignoreComments: true }],
      "@stylistic/eol-last": "error",
      "@stylistic/no-trailing-spaces": "error",
      "@typescript-eslint/consistent-type-imports": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      eqeqeq: "error",
      "no-console": "error",
    },
  },
  {
    files: ["**/*.js", "**/*.mjs"],
    languageOptions: { globals: globals.node },
  },
  {
    files: ["test/**", "examples/**", "bench/**", "scripts/**"],
    // Tests read loosely typed JSON, and the load test prints what it measured.
    rules: { "@typescript-eslint/no-explicit-any": "off", "no-console": "off", "@stylistic/max-len": "off" },
  },
);

/**
 * Writes docs/errors.md: every error reason the system raises, with its gRPC
 * code(s), the package that raises it and what it means. The table is read
 * from the code itself, so it cannot drift from it:
 *
 * - a reason is a property of an exported `as const` object whose name ends in
 *   `Reason` (ErrorReason, NamingErrorReason, LedgerStoreReason, ...); its doc
 *   comment is the meaning;
 * - its code comes from where production code raises it: the first argument of
 *   `new LedgerlineError(code, reason, ...)`, INVALID_ARGUMENT for
 *   `invalidArgument(reason, ...)`, or the code of a helper that passes one of
 *   its parameters on as the reason (followed through any depth of helpers).
 *
 * `npm run errors:doc` rewrites the file; `npm run errors:check` (run by CI)
 * fails when the file differs from what the code says.
 */
import { readFileSync, readdirSync, writeFileSync, existsSync, mkdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import * as prettier from 'prettier';
import ts from 'typescript';

const ROOT = join(__dirname, '..');
const OUTPUT = join(ROOT, 'docs', 'errors.md');

// Test code raises reasons too (fakes of a store, made-up reasons); the table
// is what a client of the running system can see, so test support is left out.
const TEST_SUPPORT = [
  /\.spec\.ts$/,
  /\.conformance\.ts$/,
  /-support\.ts$/,
  /\/(testing|testdata|robustness)\//,
  /\/(e2e-suite|fuzz-requests|crashing-store|service-fixtures|test-topic)\.ts$/,
];

const CODE_NAMES = new Set([
  'CANCELLED',
  'UNKNOWN',
  'INVALID_ARGUMENT',
  'DEADLINE_EXCEEDED',
  'NOT_FOUND',
  'ALREADY_EXISTS',
  'PERMISSION_DENIED',
  'RESOURCE_EXHAUSTED',
  'FAILED_PRECONDITION',
  'ABORTED',
  'OUT_OF_RANGE',
  'UNIMPLEMENTED',
  'INTERNAL',
  'UNAVAILABLE',
  'DATA_LOSS',
  'UNAUTHENTICATED',
]);

interface SourceFile {
  packageName: string;
  file: string;
  source: ts.SourceFile;
}

interface ReasonConstant {
  object: string;
  value: string;
  packageName: string;
  meaning: string;
}

interface Wrapper {
  argIndex: number;
  codes: Set<string>;
}

function packageOf(directory: string): string {
  const manifest = JSON.parse(readFileSync(join(ROOT, directory, 'package.json'), 'utf8')) as { name: string };
  return manifest.name;
}

function listTs(directory: string): string[] {
  if (!existsSync(directory)) return [];
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return listTs(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

function productionSources(): SourceFile[] {
  const packages = ['libs', 'apps', 'e2e'].flatMap((group) =>
    readdirSync(join(ROOT, group)).map((name) => `${group}/${name}`),
  );
  return packages
    .filter((directory) => directory !== 'libs/proto' && existsSync(join(ROOT, directory, 'package.json')))
    .flatMap((directory) => {
      const packageName = packageOf(directory);
      return listTs(join(ROOT, directory, 'src'))
        .map((path) => relative(ROOT, path))
        .filter((file) => !TEST_SUPPORT.some((pattern) => pattern.test(`/${file}`)))
        .map((file) => ({
          packageName,
          file,
          source: ts.createSourceFile(file, readFileSync(join(ROOT, file), 'utf8'), ts.ScriptTarget.Latest, true),
        }));
    });
}

function visitAll(node: ts.Node, visit: (node: ts.Node) => void): void {
  visit(node);
  node.forEachChild((child) => visitAll(child, visit));
}

function docComment(node: ts.Node, source: ts.SourceFile): string {
  const ranges = ts.getLeadingCommentRanges(source.text, node.getFullStart()) ?? [];
  const last = ranges.at(-1);
  if (last === undefined) return '';
  const text = source.text.slice(last.pos, last.end);
  if (!text.startsWith('/**')) return '';
  return text
    .replace(/^\/\*\*|\*\/$/g, '')
    .split('\n')
    .map((line) => line.replace(/^\s*\*\s?/, '').trim())
    .join(' ')
    .trim();
}

function reasonConstants(sources: SourceFile[]): Map<string, ReasonConstant[]> {
  const byObject = new Map<string, ReasonConstant[]>();
  for (const { packageName, source } of sources) {
    for (const statement of source.statements) {
      if (!ts.isVariableStatement(statement)) continue;
      const exported = statement.modifiers?.some((modifier) => modifier.kind === ts.SyntaxKind.ExportKeyword);
      for (const declaration of statement.declarationList.declarations) {
        if (!exported || !ts.isIdentifier(declaration.name) || !declaration.name.text.endsWith('Reason')) continue;
        const init = declaration.initializer;
        if (init === undefined || !ts.isAsExpression(init) || !ts.isObjectLiteralExpression(init.expression)) continue;
        const object = declaration.name.text;
        const constants = init.expression.properties
          .filter(ts.isPropertyAssignment)
          .flatMap((property) =>
            ts.isStringLiteral(property.initializer)
              ? [{ object, value: property.initializer.text, packageName, meaning: docComment(property, source) }]
              : [],
          );
        byObject.set(object, constants);
      }
    }
  }
  return byObject;
}

/** The argument position `node` stands in, looking through parentheses and conditionals. */
function argumentSite(node: ts.Node): { call: ts.CallExpression | ts.NewExpression; index: number } | undefined {
  let current: ts.Node = node;
  while (ts.isParenthesizedExpression(current.parent) || ts.isConditionalExpression(current.parent)) {
    current = current.parent;
  }
  const parent = current.parent;
  if ((ts.isCallExpression(parent) || ts.isNewExpression(parent)) && parent.arguments !== undefined) {
    const index = parent.arguments.indexOf(current as ts.Expression);
    if (index >= 0) return { call: parent, index };
  }
  return undefined;
}

function calleeName(call: ts.CallExpression | ts.NewExpression): string {
  const callee = call.expression;
  if (ts.isIdentifier(callee)) return callee.text;
  if (ts.isPropertyAccessExpression(callee)) return callee.name.text;
  return '';
}

/** The variable a reason is stored in first, when it is, with the block it lives in. */
function localVariable(
  node: ts.Node,
): { name: string; declaration: ts.VariableDeclaration; scope: ts.Node } | undefined {
  let current: ts.Node = node;
  while (ts.isParenthesizedExpression(current.parent) || ts.isConditionalExpression(current.parent)) {
    current = current.parent;
  }
  const declaration = current.parent;
  if (!ts.isVariableDeclaration(declaration) || declaration.initializer !== current) return undefined;
  if (!ts.isIdentifier(declaration.name)) return undefined;
  let scope: ts.Node = declaration;
  while (!ts.isBlock(scope) && !ts.isSourceFile(scope)) scope = scope.parent;
  return { name: declaration.name.text, declaration, scope };
}

/**
 * The codes a code argument can take. When code and reason are chosen by the
 * same condition (`fenced ? 'ABORTED' : 'FAILED_PRECONDITION'` beside
 * `fenced ? CURSOR_FENCED : CURSOR_CLOSED`), each reason gets its own branch.
 */
function literalCodes(code: ts.Expression, reason: ts.Node): Set<string> {
  if (ts.isStringLiteral(code)) return new Set([code.text]);
  if (ts.isParenthesizedExpression(code)) return literalCodes(code.expression, reason);
  if (ts.isConditionalExpression(code)) {
    for (let current: ts.Node = reason; !ts.isNewExpression(current); current = current.parent) {
      const parent = current.parent;
      if (ts.isConditionalExpression(parent) && parent.condition.getText() === code.condition.getText()) {
        return literalCodes(parent.whenTrue === current ? code.whenTrue : code.whenFalse, reason);
      }
    }
    return new Set([...literalCodes(code.whenTrue, reason), ...literalCodes(code.whenFalse, reason)]);
  }
  return new Set(['varies']);
}

/** The codes a reason gets at this argument position, or undefined when it is not raised there. */
function codesAt(node: ts.Node, wrappers: Map<string, Wrapper>): Set<string> | undefined {
  const site = argumentSite(node);
  const parent = node.parent;
  if (ts.isParameter(parent) && parent.initializer === node) {
    // A default reason, as in LedgerlineError.from(thrown, fallbackReason = INTERNAL_ERROR).
    const fn = parent.parent;
    const fnName = ts.isMethodDeclaration(fn) || ts.isFunctionDeclaration(fn) ? fn.name?.getText() : undefined;
    if (fnName === 'from') return new Set(['INTERNAL']);
    const wrapper = fnName === undefined ? undefined : wrappers.get(fnName);
    return wrapper?.codes;
  }
  const local = localVariable(node);
  if (local !== undefined) {
    // `const reason = cond ? A : B; throw new LedgerlineError(code, reason, ...)`
    const codes = new Set<string>();
    visitAll(local.scope, (use) => {
      if (ts.isIdentifier(use) && use.text === local.name && use !== local.declaration.name) {
        for (const code of codesAt(use, wrappers) ?? []) codes.add(code);
      }
    });
    return codes.size === 0 ? undefined : codes;
  }
  if (site === undefined) {
    // A map from code to reason, like the RPC layer's transport reasons.
    if (ts.isPropertyAssignment(parent) && ts.isIdentifier(parent.name) && CODE_NAMES.has(parent.name.text)) {
      return new Set([parent.name.text]);
    }
    return undefined;
  }
  const { call, index } = site;
  const name = calleeName(call);
  if (ts.isNewExpression(call) && name === 'LedgerlineError' && index === 1) {
    const code = call.arguments?.[0];
    return code === undefined ? new Set(['varies']) : literalCodes(code, node);
  }
  if (name === 'invalidArgument' && index === 0) return new Set(['INVALID_ARGUMENT']);
  if (name === 'from' && index === 1) return new Set(['INTERNAL']);
  const wrapper = wrappers.get(name);
  if (wrapper !== undefined && wrapper.argIndex === index) return wrapper.codes;
  return undefined;
}

function enclosingFunction(
  node: ts.Node,
): { name: string; parameters: readonly ts.ParameterDeclaration[] } | undefined {
  for (let current = node.parent; current !== undefined; current = current.parent) {
    if (ts.isFunctionDeclaration(current) && current.name !== undefined) {
      return { name: current.name.text, parameters: current.parameters };
    }
    if (ts.isMethodDeclaration(current) && ts.isIdentifier(current.name)) {
      return { name: current.name.text, parameters: current.parameters };
    }
    if ((ts.isArrowFunction(current) || ts.isFunctionExpression(current)) && ts.isVariableDeclaration(current.parent)) {
      const variable = current.parent.name;
      return ts.isIdentifier(variable) ? { name: variable.text, parameters: current.parameters } : undefined;
    }
  }
  return undefined;
}

/** Helpers that pass one of their parameters on as a reason, with the codes they raise it with. */
function findWrappers(sources: SourceFile[]): Map<string, Wrapper> {
  const wrappers = new Map<string, Wrapper>();
  for (let changed = true; changed;) {
    changed = false;
    for (const { source } of sources) {
      visitAll(source, (node) => {
        if (!ts.isIdentifier(node) || ts.isParameter(node.parent)) return;
        const fn = enclosingFunction(node);
        if (fn === undefined) return;
        const argIndex = fn.parameters.findIndex((p) => ts.isIdentifier(p.name) && p.name.text === node.text);
        if (argIndex < 0) return;
        const codes = codesAt(node, wrappers);
        if (codes === undefined) return;
        const wrapper = wrappers.get(fn.name) ?? { argIndex, codes: new Set<string>() };
        const before = wrapper.codes.size;
        for (const code of codes) wrapper.codes.add(code);
        if (!wrappers.has(fn.name) || wrapper.codes.size !== before) changed = true;
        wrappers.set(fn.name, wrapper);
      });
    }
  }
  return wrappers;
}

interface Row {
  reason: string;
  codes: Set<string>;
  raisedBy: Set<string>;
  definedIn: Set<string>;
  meaning: string;
}

function buildRows(): Row[] {
  const sources = productionSources();
  const constants = reasonConstants(sources);
  const wrappers = findWrappers(sources);
  const rows = new Map<string, Row>();
  const row = (reason: string): Row => {
    const existing = rows.get(reason);
    if (existing !== undefined) return existing;
    const created: Row = { reason, codes: new Set(), raisedBy: new Set(), definedIn: new Set(), meaning: '' };
    rows.set(reason, created);
    return created;
  };
  for (const list of constants.values()) {
    for (const constant of list) {
      const entry = row(constant.value);
      entry.definedIn.add(`${constant.object} (${constant.packageName})`);
      if (entry.meaning === '') entry.meaning = constant.meaning;
    }
  }
  for (const { packageName, source } of sources) {
    visitAll(source, (node) => {
      if (!ts.isPropertyAccessExpression(node) || !ts.isIdentifier(node.expression)) return;
      const constant = constants.get(node.expression.text)?.find((c) => c.value === node.name.text);
      if (constant === undefined) return;
      const codes = codesAt(node, wrappers);
      if (codes === undefined) return;
      const entry = row(constant.value);
      for (const code of codes) entry.codes.add(code);
      entry.raisedBy.add(packageName);
    });
  }
  // Objects whose values are never raised (the cursor ledger's SkipReason) are not error reasons.
  const raisedObjects = new Set(
    [...constants.entries()]
      .filter(([, list]) => list.some((c) => (rows.get(c.value)?.raisedBy.size ?? 0) > 0))
      .map(([object]) => object),
  );
  return [...rows.values()]
    .filter((entry) => [...entry.definedIn].some((where) => raisedObjects.has(where.split(' ')[0] ?? '')))
    .sort((a, b) => a.reason.localeCompare(b.reason));
}

function cell(text: string): string {
  return text.replace(/\|/g, '\\|');
}

function render(rows: Row[]): string {
  const lines = [
    '# Error reasons',
    '',
    '<!-- Generated by scripts/errors-doc.ts from the reason constants and the code that raises them. -->',
    '<!-- Do not edit: run `npm run errors:doc`. CI runs `npm run errors:check`. -->',
    '',
    'Every failure is a `LedgerlineError`: a gRPC status code (what kind of failure, and whether a',
    'retry can help) and a stable UPPER_SNAKE reason (which failure), carried to clients in the',
    '`ledgerline-error-bin` trailer. Programs branch on the reason; import the constant from the',
    'package named under "constant" rather than spelling the string. UNAVAILABLE and',
    'DEADLINE_EXCEEDED are retryable as they are; everything else needs a change first.',
    '',
    'A failure that reaches a client without a reason of ours (from gRPC itself) gets',
    '`TRANSPORT_UNAVAILABLE`, `DEADLINE_EXCEEDED`, `CANCELLED`, `MESSAGE_TOO_LARGE` or',
    '`GRPC_<CODE>`; anything thrown that was not a `LedgerlineError` becomes INTERNAL / `INTERNAL_ERROR`.',
    '',
    '| reason | code(s) | raised by | constant | meaning |',
    '| --- | --- | --- | --- | --- |',
  ];
  for (const entry of rows) {
    const codes = entry.codes.size === 0 ? 'only by test support' : [...entry.codes].sort().join(', ');
    const raisedBy = [...entry.raisedBy].sort().join(', ');
    const definedIn = [...entry.definedIn].sort().join(', ');
    lines.push(`| \`${entry.reason}\` | ${codes} | ${cell(raisedBy)} | ${cell(definedIn)} | ${cell(entry.meaning)} |`);
  }
  return `${lines.join('\n')}\n`;
}

async function main(): Promise<void> {
  // Formatted as Prettier would, so `prettier --check .` and this check agree.
  const options = (await prettier.resolveConfig(OUTPUT)) ?? {};
  const text = await prettier.format(render(buildRows()), { ...options, filepath: OUTPUT });
  if (process.argv.includes('--check')) {
    const current = existsSync(OUTPUT) ? readFileSync(OUTPUT, 'utf8') : '';
    if (current !== text) {
      console.error('docs/errors.md is stale: run `npm run errors:doc` and commit the result.');
      process.exit(1);
    }
    console.log('docs/errors.md matches the reasons in the code');
    return;
  }
  mkdirSync(dirname(OUTPUT), { recursive: true });
  writeFileSync(OUTPUT, text);
  console.log(`wrote ${relative(ROOT, OUTPUT)}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

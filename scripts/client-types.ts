// Writes packages/sdk/dist/client.d.ts (and an empty client.js), the SDK's
// `./client` entry, from packages/sdk/src/client.ts: `npm run build` runs it
// after tsc.
//
// tsc's own declaration of the router names the server's context, metadata
// and error types, so a front end would need the service's sources, Prisma's
// generated client and express's types to read it. This file spells the
// router out instead: each procedure's input and output as plain types, the
// error shape, and `ctx`/`meta` as `object` (a client never sees them). Types
// the printed ones name (JsonValue, the error kinds) are copied in; anything
// else from outside @trpc/server and zod (what a front end has) stops the
// build with the type's name.
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { ClientTypesError, packages, TypePrinter } from "./client-types-printer.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const entryFile = join(root, "packages/sdk/src/client.ts");
const entryName = relative(root, entryFile);
const outDir = join(root, "packages/sdk/dist");
const trpc = packages["@trpc/server"];

function createProgram(): ts.Program {
  const host = { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} };
  const config = ts.getParsedCommandLineOfConfigFile(join(root, "tsconfig.build.json"), {}, host);
  if (!config) throw new ClientTypesError("cannot read tsconfig.build.json");
  return ts.createProgram([entryFile], { ...config.options, noEmit: true });
}

const typeOfProperty = (checker: ts.TypeChecker, type: ts.Type, name: string): ts.Type => {
  const property = type.getProperty(name);
  if (!property) throw new ClientTypesError(`the router's type has no ${name}`);
  return checker.getTypeOfSymbol(property);
};

const procedureKinds = {
  query: "TRPCQueryProcedure",
  mutation: "TRPCMutationProcedure",
  subscription: "TRPCSubscriptionProcedure",
} as const;

/** The router's record as a type literal: procedures and nested records. */
function printRecord(checker: ts.TypeChecker, printer: TypePrinter, record: ts.Type, path: string): string {
  const members = checker.getPropertiesOfType(record).map((property) => {
    const value = checker.getTypeOfSymbol(property);
    const key = JSON.stringify(property.name);
    const def = value.getProperty("_def") && typeOfProperty(checker, value, "_def");
    if (!def?.getProperty("procedure")) {
      return `${key}: ${printRecord(checker, printer, value, `${path}${property.name}.`)};`;
    }
    const kind = typeOfProperty(checker, def, "type");
    const kindName = kind.isStringLiteral() ? kind.value : "";
    if (!(kindName in procedureKinds)) throw new ClientTypesError(`${path}${property.name}: unknown procedure kind`);
    const types = typeOfProperty(checker, def, "$types");
    const input = printer.print(typeOfProperty(checker, types, "input"));
    const output = printer.print(typeOfProperty(checker, types, "output"));
    const procedure = procedureKinds[kindName as keyof typeof procedureKinds];
    return `${key}: ${trpc}.${procedure}<{\ninput: ${input};\noutput: ${output};\nmeta: object;\n}>;`;
  });
  return `{\n${members.join("\n")}\n}`;
}

/** The entry's own text without its import of the router: types only, so it is valid as a declaration file. */
function entryText(entry: ts.SourceFile, routerImport: ts.ImportDeclaration): string {
  for (const statement of entry.statements) {
    const typeOnly =
      (ts.isImportDeclaration(statement) && statement.importClause?.isTypeOnly) ||
      ts.isTypeAliasDeclaration(statement) ||
      ts.isInterfaceDeclaration(statement) ||
      (ts.isExportDeclaration(statement) && statement.isTypeOnly && !statement.moduleSpecifier);
    if (!typeOnly) throw new ClientTypesError(`${entryName} must hold types only: ${statement.getText()}`);
    if (ts.isImportDeclaration(statement) && statement !== routerImport) {
      const from = (statement.moduleSpecifier as ts.StringLiteral).text;
      if (!(from in packages)) {
        throw new ClientTypesError(`${entryName} may import types from ${Object.keys(packages).join(" and ")} only`);
      }
    }
  }
  const text = entry.getFullText();
  return text.slice(0, routerImport.getStart()) + text.slice(routerImport.getEnd()).replace(/^\r?\n/, "");
}

function generate(): string {
  const program = createProgram();
  const checker = program.getTypeChecker();
  const entry = program.getSourceFile(entryFile);
  if (!entry) throw new ClientTypesError(`${entryName} is missing`);
  // The rest of the sources were checked by tsc just before; the entry is checked here.
  failOnDiagnostics([...program.getSyntacticDiagnostics(entry), ...program.getSemanticDiagnostics(entry)]);

  const routerImport = entry.statements.find(
    (statement): statement is ts.ImportDeclaration =>
      ts.isImportDeclaration(statement) &&
      !!statement.importClause?.namedBindings &&
      ts.isNamedImports(statement.importClause.namedBindings) &&
      statement.importClause.namedBindings.elements.some((element) => element.name.text === "AppRouter"),
  );
  if (!routerImport?.importClause?.namedBindings || !ts.isNamedImports(routerImport.importClause.namedBindings)) {
    throw new ClientTypesError(`${entryName} must import the type AppRouter`);
  }
  const appRouterName = routerImport.importClause.namedBindings.elements.find((e) => e.name.text === "AppRouter");
  const imported = appRouterName && checker.getSymbolAtLocation(appRouterName.name);
  if (!imported) throw new ClientTypesError("cannot resolve AppRouter");
  const router = checker.getDeclaredTypeOfSymbol(checker.getAliasedSymbol(imported));

  const reserved = entry.statements.flatMap((statement) =>
    ts.isTypeAliasDeclaration(statement) || ts.isInterfaceDeclaration(statement) ? [statement.name.text] : [],
  );
  const printer = new TypePrinter(program, entry, join(root, "src"), ["AppRouter", ...reserved]);
  const def = typeOfProperty(checker, router, "_def");
  const rootTypes = typeOfProperty(checker, typeOfProperty(checker, def, "_config"), "$types");
  const errorShape = printer.print(typeOfProperty(checker, rootTypes, "errorShape"));
  const transformer = printer.print(typeOfProperty(checker, rootTypes, "transformer"));
  const record = printRecord(checker, printer, typeOfProperty(checker, def, "record"), "");

  return [
    `// Generated by scripts/client-types.ts from ${entryName} and the router: do not edit.`,
    ...[...printer.imported].map((from) => `import type * as ${packages[from]} from "${from}";`),
    "",
    entryText(entry, routerImport).trim(),
    "",
    "/** The router's type, for `createTRPCClient<AppRouter>(…)`: procedures' inputs, outputs and errors. */",
    `type AppRouter = ${trpc}.TRPCBuiltRouter<{\nctx: object;\nmeta: object;\nerrorShape: ${errorShape};\ntransformer: ${transformer};\n}, ${record}>;`,
    ...printer.declarations(),
    "// Only what is exported above is the entry's; the types copied in stay private.",
    "export {};",
    "",
  ].join("\n");
}

/** Type-checks the written file on its own, as a front end would read it. */
function check(file: string): void {
  const program = ts.createProgram([file], {
    strict: true,
    noEmit: true,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    types: [],
    skipLibCheck: true,
  });
  const source = program.getSourceFile(file);
  failOnDiagnostics([...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)]);
}

function failOnDiagnostics(diagnostics: readonly ts.Diagnostic[]): void {
  if (diagnostics.length === 0) return;
  const host = { getCanonicalFileName: (f: string) => f, getCurrentDirectory: () => root, getNewLine: () => "\n" };
  throw new ClientTypesError(ts.formatDiagnostics(diagnostics, host));
}

/** The generated text, parsed and printed again for tsc's own indentation. */
const formatted = (text: string) =>
  ts.createPrinter().printFile(ts.createSourceFile("index.d.ts", text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS));

try {
  const declaration = formatted(generate());
  mkdirSync(outDir, { recursive: true });
  const file = join(outDir, "client.d.ts");
  writeFileSync(file, declaration);
  writeFileSync(join(outDir, "client.js"), "// Types only: see client.d.ts.\nexport {};\n");
  check(file);
  process.stdout.write(`wrote ${relative(root, file)}\n`);
} catch (error) {
  if (!(error instanceof ClientTypesError)) throw error;
  process.stderr.write(`client types: ${error.message}\n`);
  process.exit(1);
}

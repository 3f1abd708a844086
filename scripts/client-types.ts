// Writes dist/client/index.d.ts (and an empty index.js), the package's
// `./client` entry, from src/client/index.ts: `npm run build` runs it after tsc.
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

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const entryFile = join(root, "src/client/index.ts");
const outDir = join(root, "dist/client");
/** The packages a front end has, and the namespace the generated file imports each under. */
const packages = { "@trpc/server": "TRPC", zod: "Zod" } as const;
type Package = keyof typeof packages;
const trpc = packages["@trpc/server"];
const { factory } = ts;

class ClientTypesError extends Error {}

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

/** Prints types as nodes that name only @trpc/server, zod, globals and the types it copies in. */
class TypePrinter {
  private readonly printer = ts.createPrinter({ removeComments: true });
  /** Copied-in declarations, by the symbol they copy. */
  private readonly copied = new Map<ts.Symbol, { name: string; text?: string }>();
  private readonly usedNames: Set<string>;
  private publicNames: Map<ts.Symbol, { from: Package; name: string }> | undefined;
  /** The packages the printed types name. */
  readonly imported = new Set<Package>(["@trpc/server"]);

  constructor(
    private readonly program: ts.Program,
    private readonly entry: ts.SourceFile,
    reservedNames: Iterable<string>,
  ) {
    this.usedNames = new Set([...Object.values(packages), ...reservedNames]);
  }

  private get checker() {
    return this.program.getTypeChecker();
  }

  print(type: ts.Type, inTypeAlias = false): string {
    // IgnoreErrors: without a module resolver the builder cannot name
    // the packages' or the sources' types, and writes import("<absolute path>")
    // types instead, which rewrite() maps; a name it leaves unresolved fails check().
    const flags =
      ts.NodeBuilderFlags.NoTruncation |
      ts.NodeBuilderFlags.IgnoreErrors |
      ts.NodeBuilderFlags.MultilineObjectLiterals |
      (inTypeAlias ? ts.NodeBuilderFlags.InTypeAlias : 0);
    const node = this.checker.typeToTypeNode(type, this.entry, flags);
    if (!node) throw new ClientTypesError(`cannot print ${this.checker.typeToString(type)}`);
    const [rewritten] = ts.transform<ts.Node>(node, [(context) => (top) => this.rewrite(top, context)]).transformed;
    if (!rewritten) throw new ClientTypesError(`cannot print ${this.checker.typeToString(type)}`);
    return this.printer.printNode(ts.EmitHint.Unspecified, rewritten, this.entry);
  }

  /** The copied-in declarations, in the order they were first named. */
  declarations(): string[] {
    return [...this.copied.values()].map(({ name, text }) => `type ${name} = ${text};`);
  }

  private rewrite(node: ts.Node, context: ts.TransformationContext): ts.Node {
    const visit = (child: ts.Node): ts.Node => {
      if (ts.isImportTypeNode(child)) return this.replaceImport(child, visit);
      if (ts.isTypeQueryNode(child)) throw new ClientTypesError("a procedure's type refers to a value (typeof)");
      return ts.visitEachChild(child, visit, context);
    };
    return visit(node);
  }

  private replaceImport(node: ts.ImportTypeNode, visit: (child: ts.Node) => ts.Node): ts.TypeNode {
    const argument = node.argument;
    const specifier =
      ts.isLiteralTypeNode(argument) && ts.isStringLiteral(argument.literal) ? argument.literal.text : "";
    const qualifier = node.qualifier;
    if (node.isTypeOf || !qualifier || !ts.isIdentifier(qualifier)) {
      throw new ClientTypesError(`cannot copy a value or namespace from "${specifier}"`);
    }
    const typeArguments = node.typeArguments?.map((argument) => visit(argument) as ts.TypeNode);
    const { file, symbol } = this.resolveImport(specifier, qualifier.text);
    const exported = this.packageExports().get(symbol);
    if (exported) {
      this.imported.add(exported.from);
      const name = factory.createQualifiedName(factory.createIdentifier(packages[exported.from]), exported.name);
      return factory.createTypeReferenceNode(name, typeArguments);
    }
    if (!file.fileName.startsWith(join(root, "src/"))) {
      throw new ClientTypesError(`${qualifier.text} comes from ${file.fileName}, which a front end does not have`);
    }
    if (typeArguments?.length) {
      throw new ClientTypesError(`cannot copy the generic type ${qualifier.text}; name a concrete type`);
    }
    return factory.createTypeReferenceNode(this.copy(symbol, qualifier.text));
  }

  /** The file and the declaration an import type names (the node builder writes absolute paths). */
  private resolveImport(specifier: string, name: string): { file: ts.SourceFile; symbol: ts.Symbol } {
    const withoutExtension = (fileName: string) => fileName.replace(/(\.d)?\.[cm]?tsx?$/, "");
    const path = specifier.startsWith(".") ? join(dirname(this.entry.fileName), specifier) : specifier;
    const file =
      this.program
        .getSourceFiles()
        .find((candidate) => withoutExtension(candidate.fileName) === withoutExtension(path)) ??
      this.sourceFileOfModule(specifier);
    const module = file && this.checker.getSymbolAtLocation(file);
    const exported = module && this.checker.getExportsOfModule(module).find((symbol) => symbol.name === name);
    if (!file || !exported) throw new ClientTypesError(`cannot find ${name} in "${specifier}"`);
    const symbol = exported.flags & ts.SymbolFlags.Alias ? this.checker.getAliasedSymbol(exported) : exported;
    return { file, symbol };
  }

  private sourceFileOfModule(specifier: string): ts.SourceFile | undefined {
    // The entry is an ES module: resolve as its imports do (the "import" condition).
    const { resolvedModule } = ts.resolveModuleName(
      specifier,
      this.entry.fileName,
      this.program.getCompilerOptions(),
      ts.sys,
      undefined,
      undefined,
      ts.ModuleKind.ESNext,
    );
    return resolvedModule && this.program.getSourceFile(resolvedModule.resolvedFileName);
  }

  /** The public name, in @trpc/server or zod, of each declaration they export. */
  private packageExports(): Map<ts.Symbol, { from: Package; name: string }> {
    if (this.publicNames) return this.publicNames;
    const names = new Map<ts.Symbol, { from: Package; name: string }>();
    for (const from of Object.keys(packages) as Package[]) {
      const file = this.sourceFileOfModule(from);
      const module = file && this.checker.getSymbolAtLocation(file);
      if (!module) throw new ClientTypesError(`cannot resolve ${from}`);
      for (const exported of this.checker.getExportsOfModule(module)) {
        const target = exported.flags & ts.SymbolFlags.Alias ? this.checker.getAliasedSymbol(exported) : exported;
        if (!names.has(target)) names.set(target, { from, name: exported.name });
      }
    }
    this.publicNames = names;
    return names;
  }

  /** Copies an exported type alias or interface of the service's sources; returns its local name. */
  private copy(symbol: ts.Symbol, name: string): string {
    const known = this.copied.get(symbol);
    if (known) return known.name;

    let local = name;
    for (let n = 2; this.usedNames.has(local); n++) local = `${name}_${n}`;
    this.usedNames.add(local);
    const entry: { name: string; text?: string } = { name: local };
    this.copied.set(symbol, entry); // before printing: the type may refer to itself
    if (!(symbol.flags & (ts.SymbolFlags.TypeAlias | ts.SymbolFlags.Interface))) {
      throw new ClientTypesError(`${name} is not a type alias or an interface`);
    }
    const declared = this.checker.getDeclaredTypeOfSymbol(symbol);
    entry.text = symbol.flags & ts.SymbolFlags.Interface ? this.printMembers(declared) : this.print(declared, true);
    return local;
  }

  /** An interface as an object type literal, so its copy needs no declaration of its own. */
  private printMembers(type: ts.Type): string {
    const members = this.checker.getPropertiesOfType(type).map((property) => {
      const optional = property.flags & ts.SymbolFlags.Optional ? "?" : "";
      const propertyType = this.checker.getTypeOfSymbol(property);
      return `${JSON.stringify(property.name)}${optional}: ${this.print(propertyType)};`;
    });
    return `{\n${members.join("\n")}\n}`;
  }
}

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
    if (!typeOnly) throw new ClientTypesError(`src/client/index.ts must hold types only: ${statement.getText()}`);
    if (ts.isImportDeclaration(statement) && statement !== routerImport) {
      const from = (statement.moduleSpecifier as ts.StringLiteral).text;
      if (!(from in packages)) {
        throw new ClientTypesError(
          `src/client/index.ts may import types from ${Object.keys(packages).join(" and ")} only`,
        );
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
  if (!entry) throw new ClientTypesError("src/client/index.ts is missing");
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
    throw new ClientTypesError("src/client/index.ts must import the type AppRouter");
  }
  const appRouterName = routerImport.importClause.namedBindings.elements.find((e) => e.name.text === "AppRouter");
  const imported = appRouterName && checker.getSymbolAtLocation(appRouterName.name);
  if (!imported) throw new ClientTypesError("cannot resolve AppRouter");
  const router = checker.getDeclaredTypeOfSymbol(checker.getAliasedSymbol(imported));

  const reserved = entry.statements.flatMap((statement) =>
    ts.isTypeAliasDeclaration(statement) || ts.isInterfaceDeclaration(statement) ? [statement.name.text] : [],
  );
  const printer = new TypePrinter(program, entry, ["AppRouter", ...reserved]);
  const def = typeOfProperty(checker, router, "_def");
  const rootTypes = typeOfProperty(checker, typeOfProperty(checker, def, "_config"), "$types");
  const errorShape = printer.print(typeOfProperty(checker, rootTypes, "errorShape"));
  const transformer = printer.print(typeOfProperty(checker, rootTypes, "transformer"));
  const record = printRecord(checker, printer, typeOfProperty(checker, def, "record"), "");

  return [
    "// Generated by scripts/client-types.ts from src/client/index.ts and the router: do not edit.",
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
  const file = join(outDir, "index.d.ts");
  writeFileSync(file, declaration);
  writeFileSync(join(outDir, "index.js"), "// Types only: see index.d.ts.\nexport {};\n");
  check(file);
  process.stdout.write(`wrote ${relative(root, file)}\n`);
} catch (error) {
  if (!(error instanceof ClientTypesError)) throw error;
  process.stderr.write(`client types: ${error.message}\n`);
  process.exit(1);
}

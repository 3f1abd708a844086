// The type printer of scripts/client-types.ts: prints a type as text that
// names only @trpc/server's and zod's public types, globals, and copies of the
// service's own type aliases and interfaces it meets on the way.
import { dirname, join } from "node:path";
import ts from "typescript";

/** The packages a front end has, and the namespace the generated file imports each under. */
export const packages = { "@trpc/server": "TRPC", zod: "Zod" } as const;
export type Package = keyof typeof packages;
const { factory } = ts;

export class ClientTypesError extends Error {}

/** Prints types as nodes that name only @trpc/server, zod, globals and the types it copies in. */
export class TypePrinter {
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
    /** The service's own sources: types from there are copied in. */
    private readonly sourcesDir: string,
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
    // A subscription's tracked items reach the client as TrackedData<T>, which
    // @trpc/server does not export by name: it is written out as what it is.
    if (symbol.name === "TrackedData" && typeArguments?.length === 1 && file.fileName.includes("@trpc/server")) {
      return factory.createTypeLiteralNode([
        factory.createPropertySignature(
          undefined,
          "id",
          undefined,
          factory.createKeywordTypeNode(ts.SyntaxKind.StringKeyword),
        ),
        factory.createPropertySignature(undefined, "data", undefined, typeArguments[0] as ts.TypeNode),
      ]);
    }
    if (!file.fileName.startsWith(`${this.sourcesDir}/`)) {
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

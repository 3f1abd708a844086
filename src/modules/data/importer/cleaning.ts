/**
 * The cleaning rules of docs/api/data.md, one function per kind of cell. Each takes
 * the raw (trimmed) text of a cell and returns the value to store, or throws
 * a CellError that the importer turns into "file, line, column: message".
 */
export class CellError extends Error {}

const monthPattern = /^\d{4}-(0[1-9]|1[0-2])$/;
// Plain digits, or digits grouped by thousands separators ("1,274").
const wholeNumberPattern = /^(\d+|\d{1,3}(,\d{3})+)$/;
// Both databases store these columns as 32-bit integers.
const maxInteger = 2_147_483_647;

export function month(raw: string): string {
  if (!monthPattern.test(raw)) throw new CellError(`"${raw}" is not a month (YYYY-MM)`);
  return raw;
}

export function label(raw: string): string {
  if (raw === "") throw new CellError("is empty");
  return raw.replace(/\s+/g, " ");
}

/** `B.M.W.` → `BMW`, `Mclaren` → `MCLAREN`: one spelling per make. */
export const make = (raw: string): string => label(raw.replaceAll(".", "").trim()).toUpperCase();

/** `Coupe/ Convertible` → `Coupe/Convertible`. */
export const vehicleType = (raw: string): string => label(raw).replace(/\s*\/\s*/g, "/");

export function wholeNumber(raw: string): number {
  if (raw === "") throw new CellError("is empty");
  if (!wholeNumberPattern.test(raw)) throw new CellError(`"${raw}" is not a whole number`);
  const value = Number(raw.replaceAll(",", ""));
  if (value > maxInteger) throw new CellError(`"${raw}" is too large`);
  return value;
}

/** A count of cars or bids: an empty cell means none. */
export const count = (raw: string): number => (raw === "" ? 0 : wholeNumber(raw));

/**
 * Quotes an SQL identifier (table or column name) for SQLite: wrapped in double quotes, inner quotes doubled.
 * Source: SQLite "SQL Keywords" (identifiers in double quotes). One helper for every place that builds SQL from names.
 * @param name the identifier as it is in the schema.
 * @returns `"name"` safe to splice into a statement.
 */
export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

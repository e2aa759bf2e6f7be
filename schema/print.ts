/** Print the schema as SDL: `npm run schema` writes schema/schema.graphql (committed; a test fails when stale). */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { lexicographicSortSchema, printSchema } from 'graphql';
import { schema } from './index.js';

export const printedSchema = (): string => `${printSchema(lexicographicSortSchema(schema))}\n`;

export const SCHEMA_FILE = 'schema/schema.graphql';

if (process.argv.includes('--write')) {
  writeFileSync(join(process.cwd(), SCHEMA_FILE), printedSchema());
  console.log(`wrote ${SCHEMA_FILE}`);
}

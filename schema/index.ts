/** The whole schema: every domain file registers its types and root fields on the builder. */
import { builder } from './builder.js';
import './scalars.js';
import './errors.js';
import './decoding.js';
import './page.js';
import './metrics.js';
import './parse-job.js';
import './job-event.js';
import './engine.js';

// Not sorted here: only the printed schema.graphql needs an order (print.ts sorts it), and sorting cost a start
// some 20 ms of the server's one thread.
export const schema = builder.toSchema({ sortSchema: false });

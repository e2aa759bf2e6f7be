/**
 * Job ids are UUIDs the store makes (randomUUID, in src/jobs). Anything else names no job: it is answered as an
 * unknown id without asking a store, so a client's text never becomes part of a store's key names.
 */
const JOB_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export const isJobId = (id: string): boolean => JOB_ID.test(id);

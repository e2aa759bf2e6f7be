export async function evalCommand(_a: string[]): Promise<number> { throw new Error('todo'); }

/**
 * `work`'s value, or undefined once `ms` have passed without it (the work itself goes on; its
 * rejection, if it comes first, is passed on). The timer never outlives the race.
 */
export async function within<T>(work: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([work, new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

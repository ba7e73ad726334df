/** Bounded wait on a shutdown step: true when it finished within `ms`. */
export async function within(ms: number, step: Promise<unknown> | undefined): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((r) => (timer = setTimeout(() => r(false), ms).unref()));
  try {
    return await Promise.race([Promise.resolve(step).then(() => true), late]);
  } finally {
    clearTimeout(timer);
  }
}

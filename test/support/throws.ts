// What a call throws, whole, so a negative test asserts exactly the message the user reads.
export function messageOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('it did not throw');
}

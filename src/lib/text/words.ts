/** Counting in messages: "1 node", "2 nodes", never "1 nodes" or "node(s)". */

/** `count` and the noun, plural unless the count is one (`many` for nouns whose plural is not noun + s). */
export function counted(count: number | bigint, noun: string, many = `${noun}s`): string {
  return `${count} ${count === 1 || count === 1n ? noun : many}`
}

/** "Did you mean": the nearest of some known words to what was typed, when it is near enough to be a typo. */
/**
 * Edits between two words, a swap of two neighbours counting as one (optimal string alignment): "pots" is one edit
 * from "post" but two from "logs", and "jbo" one from "job", as the typos they are.
 */
export function distance(a: string, b: string): number {
  // Three rows of the table: the one before the last is what a swap reaches back to.
  let before: number[] = []
  let last = Array.from({length: b.length + 1}, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const row = [i]
    for (let j = 1; j <= b.length; j++) {
      const same = a[i - 1] === b[j - 1]
      let cost = Math.min(last[j]! + 1, row[j - 1]! + 1, last[j - 1]! + (same ? 0 : 1))
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) cost = Math.min(cost, before[j - 2]! + 1)
      row.push(cost)
    }
    before = last
    last = row
  }
  return last[b.length]!
}

/** The candidate nearest to `typed` (edit distance), if within a third of its length (at least `least` edits). */
export function closest(typed: string, candidates: Iterable<string>, least = 2): string | undefined {
  let best: {word: string; cost: number} | undefined
  for (const word of candidates) {
    const cost = distance(typed, word)
    if (!best || cost < best.cost) best = {word, cost}
  }
  return best && best.cost <= Math.max(least, Math.floor(best.word.length / 3)) ? best.word : undefined
}

/** The gpunet command (as words) nearest to the typed words: a misspelt command, or one in a misspelt topic. */
export function suggestCommand(
  typed: string[],
  config: {topics: {name: string}[]; commandIDs: string[]},
): string | undefined {
  return closestCommand(typed, config.commandIDs) ?? closestInTopic(typed, config)
}

/** The command whose words are nearest to what was typed (oclif folds the arguments into the id), if near. */
function closestCommand(typed: string[], commandIds: string[]): string | undefined {
  let best: {id: string; cost: number} | undefined
  for (const id of commandIds) {
    const words = id.split(':')
    const cost = distance(typed.slice(0, words.length).join(' '), words.join(' '))
    if (!best || cost < best.cost) best = {id: words.join(' '), cost}
  }
  return best && best.cost <= Math.max(2, Math.floor(best.id.length / 4)) ? best.id : undefined
}

/** For a misspelt topic ("jobb"), the command in the nearest topic, or the topic itself ("job"). */
function closestInTopic(typed: string[], config: {topics: {name: string}[]; commandIDs: string[]}): string | undefined {
  const [first = '', ...rest] = typed
  let best: {name: string; cost: number} | undefined
  for (const {name} of config.topics) {
    if (name.includes(':')) continue
    const cost = distance(first, name)
    if (!best || cost < best.cost) best = {name, cost}
  }
  if (!best || best.cost > Math.max(1, Math.floor(best.name.length / 3))) return undefined
  return (rest.length > 0 ? closestCommand([best.name, ...rest], config.commandIDs) : undefined) ?? best.name
}

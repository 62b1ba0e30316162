/** "Did you mean": the nearest of some known words to what was typed, when it is near enough to be a typo. */
import {distance} from 'fastest-levenshtein'

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

/**
 * What `deployment fund`, `withdraw` and `get` say of a shared vault: the other deployments on it, read page by page
 * from the manager's list filtered by vault, and the words that name them.
 */
import {strict as assert} from 'node:assert'

import type {DeploymentClient} from '../../../src/lib/deployments/client/client.js'
import {sharedText, vaultSharers} from '../../../src/lib/deployments/client/client-vault.js'

/** A client whose list answers `pages` in turn (each page's deployments and next cursor), recording the queries. */
function lister(pages: {ids: [string, string][]; next: string | null}[]) {
  const queries: Record<string, unknown>[] = []
  const client = {
    async list(query: Record<string, unknown>) {
      queries.push(query)
      const page = pages[queries.length - 1] ?? {ids: [], next: null}
      return {
        deployments: page.ids.map(([id, vault]) => ({id, vault})),
        pagination: {cursor_next: page.next},
      }
    },
  } as unknown as DeploymentClient
  return {client, queries}
}

describe("a vault's other deployments", () => {
  it('are every page of the list filtered by vault, without the deployment named, nor another vault', async () => {
    const {client, queries} = lister([
      {
        ids: [
          ['a', 'V'],
          ['me', 'V'],
        ],
        next: 'c1',
      },
      {
        ids: [
          ['b', 'V'],
          ['x', 'W'],
          ['a', 'V'],
        ],
        next: null,
      },
    ])
    assert.deepEqual(await vaultSharers(client, 'V', 'me'), ['a', 'b'])
    assert.deepEqual(queries, [
      {vault: 'V', limit: 100},
      {vault: 'V', limit: 100, cursor: 'c1'},
    ])
  })

  it('stop after 100 pages of a manager that always answers a next cursor', async () => {
    const {client, queries} = lister(Array.from({length: 200}, (_, i) => ({ids: [[`d${i}`, 'V']], next: `c${i}`})))
    assert.equal((await vaultSharers(client, 'V', 'me')).length, 100)
    assert.equal(queries.length, 100)
  })

  it('are named: none, one, many, and past ten counted', () => {
    assert.equal(sharedText([]), 'no other deployment pays from it')
    assert.equal(sharedText(['a']), 'shared with 1 other deployment: a')
    assert.equal(sharedText(['a', 'b']), 'shared with 2 other deployments: a, b')
    const twelve = Array.from({length: 12}, (_, i) => `d${i}`)
    assert.equal(sharedText(twelve), `shared with 12 other deployments: ${twelve.slice(0, 10).join(', ')} and 2 more`)
  })
})

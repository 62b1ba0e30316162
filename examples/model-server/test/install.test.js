// What `npm ci` in this folder installed: the CPU binary of llama.cpp and nothing of its GPU builds (about 350 MB),
// as the folder's .npmrc and allowScripts say. Run after `npm ci`, so a change to either shows here.
import assert from 'node:assert/strict'
import {existsSync, readdirSync, readFileSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {describe, it} from 'node:test'
import {fileURLToPath} from 'node:url'

const folder = join(dirname(fileURLToPath(import.meta.url)), '..')
const scoped = join(folder, 'node_modules', '@node-llama-cpp')

describe('install', () => {
  it("holds llama.cpp's CPU binary for linux-x64 and none of its CUDA or Vulkan builds", () => {
    assert.ok(existsSync(scoped), 'npm ci has run in examples/model-server')
    assert.deepEqual(readdirSync(scoped), ['linux-x64'])
  })

  it("omits optional dependencies and denies node-llama-cpp's install script (it could download and build)", () => {
    assert.match(readFileSync(join(folder, '.npmrc'), 'utf8'), /^omit=optional$/m)
    const manifest = JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8'))
    assert.equal(manifest.allowScripts['node-llama-cpp'], false)
    // The CPU binary is a dependency of its own, so omitting the optional ones keeps it.
    assert.equal(manifest.dependencies['@node-llama-cpp/linux-x64'], manifest.dependencies['node-llama-cpp'])
  })
})

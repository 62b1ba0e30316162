import {readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {pathToFileURL} from 'node:url'

/** A record of the modules a child Node process loads through its ES module loader. */
export interface ModuleLoadLog {
  /** Node arguments that install the recording hook: put them before the child's script. */
  importArgs: string[]
  /** The URLs the child's ES module loader loaded, in order. */
  loaded(): string[]
}

/** Writes, into `dir`, a module hook that records every module URL a child process loads. */
export function moduleLoadLog(dir: string): ModuleLoadLog {
  const log = join(dir, 'loads.txt')
  const hooks = join(dir, 'hooks.mjs')
  writeFileSync(
    hooks,
    `import {appendFileSync} from 'node:fs'\nexport async function load(url, context, next) {\n` +
      `  appendFileSync(${JSON.stringify(log)}, url + '\\n')\n  return next(url, context)\n}\n`,
  )
  const register = join(dir, 'register.mjs')
  writeFileSync(
    register,
    `import {register} from 'node:module'\nregister(${JSON.stringify(pathToFileURL(hooks).href)})\n`,
  )
  return {
    importArgs: ['--import', pathToFileURL(register).href],
    loaded: () => readFileSync(log, 'utf8').split('\n').filter(Boolean),
  }
}

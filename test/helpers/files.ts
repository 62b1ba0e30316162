/** Temporary folders for tests. */
import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

/** A fresh temp directory, removed by the returned cleanup. */
export function tempDir(prefix = 'gpunet-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix))
}

/** Removes a temp directory. */
export function removeDir(dir: string): void {
  rmSync(dir, {recursive: true, force: true})
}

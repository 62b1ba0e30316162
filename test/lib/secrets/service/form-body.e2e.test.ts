/** The secrets service's form parsing stays linear: a body repeating one name froze the service (issue 22 #3). */
import {strict as assert} from 'node:assert'

import {parseForm} from '../../../../src/lib/secrets/service/body.js'
import {runWithWatchdog} from '../../../helpers/watchdog.js'

describe('form bodies', function () {
  this.timeout(60_000)

  it('parses a 1 MB body repeating one name in a child process the watchdog does not have to kill', async () => {
    const {stdout, killed} = await runWithWatchdog(`
      import {parseForm} from './src/lib/secrets/service/body.ts'
      const values = parseForm(Buffer.from('a=1&'.repeat(262_144))).a
      process.stdout.write(String(values.length))
    `)
    assert.equal(killed, false, 'parsing 1 MB of one repeated name hung')
    assert.equal(stdout, '262144')
  })

  it('gives a repeated name every value in order, and a single name its value', () => {
    const form = parseForm(Buffer.from('a=1&b=x+y&a=2&a=%C3%A9'))
    assert.deepEqual(form.a, ['1', '2', 'é'])
    assert.equal(form.b, 'x y')
  })

  it('skips empty pairs, takes a name without "=" as an empty value, and keeps "=" inside a value', () => {
    const form = parseForm(Buffer.from('&a=1&&flag&b=x=y&'))
    assert.deepEqual({...form}, {a: '1', flag: '', b: 'x=y'})
    assert.equal(Object.getPrototypeOf(form), null, 'no prototype: a __proto__ name is an ordinary member')
  })
})

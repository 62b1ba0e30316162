import {strict as assert} from 'node:assert'

import {passesCompiledCheck, semanticIssues} from '../../../src/lib/definition/semantic.js'
import {validateJobDefinition} from '../../../src/lib/definition/validate.js'
import {everyMemberDefinition as base} from '../../helpers/definitions.js'

function op(id: unknown): Record<string, unknown> {
  return {id, type: 'container/run', args: {image: 'ubuntu'}}
}

function withOps(...ops: unknown[]): Record<string, unknown> {
  return {version: '0.1', type: 'container', ops}
}

describe('semantic rules of a job definition (unique operation ids)', () => {
  it('names the first operation that holds a repeated id, for every repeat', () => {
    const doc = withOps(op('fetch'), op('run'), op('run'), op('other'), op('run'))
    assert.deepEqual(semanticIssues(doc), [
      {
        path: 'ops[2].id',
        pointer: '/ops/2/id',
        code: 'duplicate_id',
        message: 'operation id `run` is already used by ops[1]; ids must be unique within the job',
      },
      {
        path: 'ops[4].id',
        pointer: '/ops/4/id',
        code: 'duplicate_id',
        message: 'operation id `run` is already used by ops[1]; ids must be unique within the job',
      },
    ])
  })

  it('looks past operations that are not objects when naming the first', () => {
    const doc = withOps(null, 'run', op('run'), op('run'))
    assert.deepEqual(
      semanticIssues(doc).map((i) => [i.path, i.message]),
      [['ops[3].id', 'operation id `run` is already used by ops[2]; ids must be unique within the job']],
    )
  })

  it('leaves ids that are not strings to the schema: no duplicate for two missing or two numeric ids', () => {
    const doc = withOps({type: 'container/run', args: {image: 'a'}}, {type: 'container/run', args: {image: 'b'}})
    assert.deepEqual(semanticIssues(doc), [])
    assert.deepEqual(semanticIssues(withOps(op(1), op(1))), [])
    const errors = validateJobDefinition(withOps(op(1), op(1))).errors ?? []
    assert.deepEqual(
      errors.map((e) => [e.path, e.code]),
      [
        ['ops[0].id', 'invalid_type'],
        ['ops[1].id', 'invalid_type'],
      ],
    )
  })

  it('has nothing to say about a document without an array of operations', () => {
    for (const value of [null, 'x', [], {}, {ops: {a: op('a'), b: op('a')}}])
      assert.deepEqual(semanticIssues(value), [])
  })

  it('reports a repeated id next to the schema’s problems', () => {
    const doc = base()
    ;(doc.ops as Record<string, unknown>[])[1]!.id = 'run'
    doc.version = '1'
    const errors = validateJobDefinition(doc).errors ?? []
    assert.deepEqual(
      errors.map((e) => [e.path, e.code, e.message]),
      [
        ['version', 'invalid_value', '`version` must be "0.1", got "1"'],
        [
          'ops[1].id',
          'duplicate_id',
          'operation id `run` is already used by ops[0]; ids must be unique within the job',
        ],
      ],
    )
  })

  it('passes the compiled check only when the schema and the unique ids both hold', () => {
    assert.equal(passesCompiledCheck(withOps(op('a'), op('b'))), true)
    assert.equal(passesCompiledCheck(withOps(op('a'), op('a'))), false)
    assert.equal(passesCompiledCheck(withOps(op(1))), false)
  })
})

describe('semantic rules of a job definition (exposed ports, issue 59)', () => {
  const exposing = (expose: unknown) => withOps({id: 'svc', type: 'container/run', args: {image: 'ubuntu', expose}})

  it('accepts ports 1 and 65535, alone or in an array', () => {
    for (const expose of [1, 65_535, [{port: 1}, {port: 65_535}, {port: 443}]]) {
      assert.deepEqual(semanticIssues(exposing(expose)), [])
      assert.equal(validateJobDefinition(exposing(expose)).success, true)
      assert.equal(passesCompiledCheck(exposing(expose)), true)
    }
  })

  it('refuses 99999, 0, 65536, negatives and fractions as errors, saying which port, with a hint', () => {
    assert.deepEqual(semanticIssues(exposing(99_999)), [
      {
        path: 'ops[0].args.expose',
        pointer: '/ops/0/args/expose',
        code: 'port_out_of_range',
        message: 'port 99999 is not a TCP port (a whole number from 1 to 65535)',
        hint: "expose the port the container listens on, e.g. 8080; the node serves it at the job's service URL",
      },
    ])
    const ports = [{port: 0}, {port: 65_536}, {port: -1}, {port: 8080.5}]
    assert.deepEqual(
      semanticIssues(exposing(ports)).map((i) => [i.code, i.path, i.message]),
      [
        [
          'port_out_of_range',
          'ops[0].args.expose[0].port',
          'port 0 is not a TCP port (a whole number from 1 to 65535)',
        ],
        [
          'port_out_of_range',
          'ops[0].args.expose[1].port',
          'port 65536 is not a TCP port (a whole number from 1 to 65535)',
        ],
        [
          'port_out_of_range',
          'ops[0].args.expose[2].port',
          'port -1 is not a TCP port (a whole number from 1 to 65535)',
        ],
        [
          'port_out_of_range',
          'ops[0].args.expose[3].port',
          'port 8080.5 is not a TCP port (a whole number from 1 to 65535)',
        ],
      ],
    )
    // The library's verdict and the compiled fast path agree: the definition is invalid.
    const verdict = validateJobDefinition(exposing(99_999))
    assert.equal(verdict.success, false)
    assert.deepEqual(
      verdict.errors?.map((e) => e.code),
      ['port_out_of_range'],
    )
    assert.equal(passesCompiledCheck(exposing(99_999)), false)
  })

  it('leaves a port of the wrong type to the schema', () => {
    assert.deepEqual(semanticIssues(exposing('8080')), [])
    assert.deepEqual(semanticIssues(exposing([{port: '80'}])), [])
  })
})

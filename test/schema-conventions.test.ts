/**
 * The schema's conventions, checked on the schema the server serves: every field says what it is, every enum is
 * upper-case, the decoding choices are the engine registry's, codes are the ErrorCode enum, times are DateTime.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type GraphQLNamedType,
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isObjectType,
  getNamedType,
  type GraphQLField,
  type GraphQLInputField,
} from 'graphql';
import { schema } from '../schema/index.js';
import { drafterSpecs, verifierSpecs } from '../src/engine/strategies/registry.js';

const ours = (t: GraphQLNamedType): boolean => !t.name.startsWith('__');
const fieldsOf = (t: GraphQLNamedType): (GraphQLField<unknown, unknown> | GraphQLInputField)[] =>
  isObjectType(t) || isInterfaceType(t) || isInputObjectType(t) ? Object.values(t.getFields()) : [];

describe("the GraphQL schema's conventions", () => {
  const types = Object.values(schema.getTypeMap()).filter(ours);

  it('every field and input field has a description', () => {
    const missing = types.flatMap((t) =>
      fieldsOf(t)
        .filter((f) => !f.description)
        .map((f) => `${t.name}.${f.name}`),
    );
    assert.deepEqual(missing, []);
  });

  it('every type and argument has a description', () => {
    const undescribed = types.filter((t) => !t.description).map((t) => t.name);
    const args = types.flatMap((t) =>
      isObjectType(t) || isInterfaceType(t)
        ? Object.values(t.getFields()).flatMap((f) =>
            f.args.filter((a) => !a.description).map((a) => `${t.name}.${f.name}(${a.name})`),
          )
        : [],
    );
    assert.deepEqual([...undescribed, ...args], []);
  });

  it('every enum value is upper-case', () => {
    const lower = types.filter(isEnumType).flatMap((e) =>
      e
        .getValues()
        .filter((v) => v.name !== v.name.toUpperCase())
        .map((v) => `${e.name}.${v.name}`),
    );
    assert.deepEqual(lower, []);
  });

  it("drafters and verifiers are enums holding exactly the engine registry's strategies", () => {
    const values = (name: string): string[] => {
      const e = schema.getType(name);
      assert.ok(e && isEnumType(e), `${name} is an enum`);
      return e
        .getValues()
        .map((v) => v.value as string)
        .sort();
    };
    assert.deepEqual(
      values('Drafter'),
      drafterSpecs()
        .map((s) => s.name)
        .sort(),
    );
    assert.deepEqual(
      values('Verifier'),
      verifierSpecs()
        .map((s) => s.name)
        .sort(),
    );
    const input = schema.getType('DecodingInput');
    assert.ok(input && isInputObjectType(input));
    assert.equal(getNamedType(input.getFields().drafter.type).name, 'Drafter');
  });

  it('error codes are the ErrorCode enum, and times are DateTime', () => {
    const bad = types.flatMap((t) =>
      fieldsOf(t).flatMap((f) => {
        const named = getNamedType(f.type).name;
        if (f.name === 'code' && named !== 'ErrorCode') return [`${t.name}.code is ${named}`];
        if ((/At$/.test(f.name) || f.name === 'created') && named !== 'DateTime')
          return [`${t.name}.${f.name} is ${named}`];
        return [];
      }),
    );
    assert.deepEqual(bad, []);
  });
});

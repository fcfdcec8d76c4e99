import { describe, expect, it } from 'vitest';
import { defineStatusTransitions, InvalidStatusTransitionError } from '../../../src/platform/shared/status-transitions.ts';

type Light = 'red' | 'amber' | 'green' | 'off';
const LIGHTS = ['red', 'amber', 'green', 'off'] as const;
const light = defineStatusTransitions<Light>({
  resource: 'A light',
  statuses: LIGHTS,
  transitions: { red: ['green', 'off'], green: ['amber', 'off'], amber: ['red', 'off'], off: [] },
});

describe('defineStatusTransitions', () => {
  it('answers every pair from the table, never a self-transition', () => {
    for (const from of LIGHTS) {
      for (const to of LIGHTS) {
        const allowed = ({ red: ['green', 'off'], green: ['amber', 'off'], amber: ['red', 'off'], off: [] } as Record<Light, Light[]>)[from].includes(to);
        expect(light.can(from, to), `${from} -> ${to}`).toBe(allowed);
        if (allowed) expect(() => light.assert(from, to)).not.toThrow();
        else expect(() => light.assert(from, to)).toThrow(InvalidStatusTransitionError);
      }
    }
  });

  it('names the resource and both ends in its error', () => {
    expect(() => light.assert('off', 'red')).toThrow(
      expect.objectContaining({ name: 'InvalidStatusTransitionError', from: 'off', to: 'red', message: 'A light cannot move from off to red' }),
    );
  });

  it('never moves unknown statuses, including names on Object.prototype', () => {
    expect(light.can('blue' as Light, 'red')).toBe(false);
    expect(light.can('red', 'blue' as Light)).toBe(false);
    expect(light.can('constructor' as Light, 'red')).toBe(false);
    expect(light.can('red', 'toString' as Light)).toBe(false);
    expect(light.isTerminal('blue' as Light)).toBe(false);
    expect(() => light.fromStatuses('blue' as Light)).toThrow(InvalidStatusTransitionError);
  });

  it('is terminal exactly where nothing leaves', () => {
    expect(LIGHTS.filter(light.isTerminal)).toEqual(['off']);
  });

  it('is frozen, and a change to the definition afterwards changes nothing', () => {
    const transitions = { on: ['off'], off: ['on'] } as Record<'on' | 'off', ('on' | 'off')[]>;
    const statuses = ['on', 'off'] as ('on' | 'off')[];
    const switchTable = defineStatusTransitions({ resource: 'A switch', statuses, transitions });
    transitions.on.push('on');
    statuses.push('broken' as 'on');
    expect(switchTable.transitions).toEqual({ on: ['off'], off: ['on'] });
    expect(switchTable.statuses).toEqual(['on', 'off']);
    expect(Object.isFrozen(switchTable)).toBe(true);
    expect(Object.isFrozen(switchTable.transitions)).toBe(true);
    expect(Object.isFrozen(switchTable.statuses)).toBe(true);
    for (const targets of Object.values(switchTable.transitions)) expect(Object.isFrozen(targets)).toBe(true);
  });

  it('refuses a table that names statuses it does not have, or leaves one out', () => {
    expect(() => defineStatusTransitions<Light>({ resource: 'A light', statuses: LIGHTS, transitions: { red: ['blue' as Light], green: [], amber: [], off: [] } })).toThrow(
      'A light transitions name unknown statuses: blue',
    );
    expect(() =>
      defineStatusTransitions<Light>({ resource: 'A light', statuses: LIGHTS, transitions: { red: [], green: [], amber: [] } as unknown as Record<Light, Light[]> }),
    ).toThrow('A light transitions do not say where off may move');
  });

  it('uses the error the definition gives', () => {
    class BulbError extends Error {}
    const custom = defineStatusTransitions<Light>({
      resource: 'A light',
      statuses: LIGHTS,
      transitions: light.transitions,
      invalid: (from, to) => new BulbError(`${from}>${to}`),
    });
    expect(() => custom.assert('off', 'red')).toThrow(BulbError);
    expect(() => custom.fromStatuses('red', ['off'])).toThrow(BulbError);
  });

  describe('fromStatuses', () => {
    it('gives every status that may move to the target, in status order', () => {
      expect(light.fromStatuses('off')).toEqual(['red', 'amber', 'green']);
      expect(light.fromStatuses('red')).toEqual(['amber']);
    });

    it('gives those that may move to every one of several targets', () => {
      expect(light.fromStatuses(['off', 'green'])).toEqual(['red']);
      expect(() => light.fromStatuses(['green', 'red'])).toThrow('A light cannot move from any status to green or red');
    });

    it('narrows to the statuses a move means, each of which must be allowed', () => {
      expect(light.fromStatuses('off', ['green', 'red'])).toEqual(['red', 'green']);
      expect(() => light.fromStatuses('off', ['off'])).toThrow('A light cannot move from off to off');
      expect(() => light.fromStatuses(['off', 'amber'], ['green', 'red'])).toThrow('A light cannot move from red to amber');
    });

    it('never gives an empty list: a guard of nothing would silently move nothing', () => {
      expect(() => light.fromStatuses([])).toThrow('a move needs a status to move to');
      expect(() => light.fromStatuses('off', [])).toThrow('a move needs a status to move from');
    });
  });
});

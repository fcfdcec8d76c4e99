// A resource's lifecycle as data: which status may move to which. Each resource declares one table
// (payment-transitions.ts, mandate-transitions.ts, ...) and every status move asks it, in TypeScript
// (can / assert) and in SQL: statements that move statuses take their from-states from fromStatuses,
// or check a move they only know per row with statusChangeAllowedSql (status-transitions-sql.ts), so a
// move the table does not allow can neither be decided in code nor written by a statement.
//
// Self-transitions are not transitions: a write that keeps the status is not a move and needs no edge.

export class InvalidStatusTransitionError extends Error {
  override readonly name: string = 'InvalidStatusTransitionError';
  readonly from: string;
  readonly to: string;

  constructor(resource: string, from: string, to: string) {
    super(`${resource} cannot move from ${from} to ${to}`);
    this.from = from;
    this.to = to;
  }
}

export interface StatusTransitions<S extends string> {
  /** 'A payment request': how errors name the resource. */
  readonly resource: string;
  readonly statuses: readonly S[];
  /** from -> the statuses it may move to; immutable. */
  readonly transitions: Readonly<Record<S, readonly S[]>>;
  /** False for unknown statuses too, since statuses read from storage are only typed, not checked. */
  can(from: S, to: S): boolean;
  assert(from: S, to: S): void;
  /** A status nothing leaves. */
  isTerminal(status: S): boolean;
  /**
   * The statuses a statement may move to every one of `to` (a `case` may pick any of them), in status
   * order: the `where status in (...)` of that statement. `among` narrows them to the statuses the
   * statement means to move (the lock refuses only pending requests, though failed may be reached
   * from others); each of those must be allowed. Throws rather than give none, since an empty guard
   * would make the statement silently move nothing (and `in ()` is not SQL).
   */
  fromStatuses(to: S | readonly S[], among?: readonly S[]): S[];
}

export interface TransitionTableDefinition<S extends string> {
  resource: string;
  statuses: readonly S[];
  transitions: Record<S, readonly S[]>;
  /** The error an invalid move throws; InvalidStatusTransitionError when not given. */
  invalid?: (from: string, to: string) => Error;
}

/** Freezes the table and answers questions about it; the table must name only its own statuses. */
export function defineStatusTransitions<S extends string>(definition: TransitionTableDefinition<S>): StatusTransitions<S> {
  const { resource, statuses } = definition;
  const invalid = definition.invalid ?? ((from: string, to: string) => new InvalidStatusTransitionError(resource, from, to));
  const isStatus = (value: string): value is S => (statuses as readonly string[]).includes(value);
  for (const [from, targets] of Object.entries<readonly S[]>(definition.transitions)) {
    const unknown = [from, ...targets].filter((status) => !isStatus(status));
    if (unknown.length > 0) throw new Error(`${resource} transitions name unknown statuses: ${unknown.join(', ')}`);
  }
  const missing = statuses.filter((status) => !(status in definition.transitions));
  if (missing.length > 0) throw new Error(`${resource} transitions do not say where ${missing.join(', ')} may move`);

  const transitions = Object.freeze(Object.fromEntries(statuses.map((from) => [from, Object.freeze([...definition.transitions[from]])])) as Record<S, readonly S[]>);
  const can = (from: S, to: S) => isStatus(from) && isStatus(to) && transitions[from].includes(to);
  const assert = (from: S, to: S) => {
    if (!can(from, to)) throw invalid(from, to);
  };
  return Object.freeze({
    resource,
    statuses: Object.freeze([...statuses]),
    transitions,
    can,
    assert,
    isTerminal: (status: S) => isStatus(status) && transitions[status].length === 0,
    fromStatuses(to: S | readonly S[], among?: readonly S[]): S[] {
      const targets: readonly S[] = typeof to === 'string' ? [to as S] : (to as readonly S[]);
      if (targets.length === 0) throw new Error(`${resource}: a move needs a status to move to`);
      if (among !== undefined) {
        if (among.length === 0) throw new Error(`${resource}: a move needs a status to move from`);
        for (const from of among) for (const target of targets) assert(from, target);
        return statuses.filter((status) => among.includes(status));
      }
      const sources = statuses.filter((from) => targets.every((target) => can(from, target)));
      if (sources.length === 0) throw invalid('any status', targets.join(' or '));
      return sources;
    },
  });
}

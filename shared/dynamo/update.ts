/**
 * One conditional UpdateItem, built clause by clause: the table's builder, which the job item's
 * one builder (`JobUpdate`, shared/order-flow/order-transitions.ts) and the index backfill extend.
 * Every attribute name goes through a placeholder (`status`, `url` and friends are reserved words):
 * `#<attribute>` by default, or one the caller chooses; every value is `:<label>`.
 */
export class UpdateBuilder {
  private readonly sets: string[] = [];
  private readonly removes: string[] = [];
  private readonly conditions: string[] = [];
  readonly names: Record<string, string> = {};
  readonly values: Record<string, unknown> = {};

  /** `#<attribute>` (or `placeholder`) for an attribute, declared on first use. */
  name(attribute: string, placeholder = `#${attribute}`) {
    this.names[placeholder] = attribute;
    return placeholder;
  }

  value(label: string, v: unknown) {
    this.values[`:${label}`] = v;
    return `:${label}`;
  }

  /** `path = :label`. */
  set(path: string, label: string, v: unknown) {
    this.sets.push(`${path} = ${this.value(label, v)}`);
    return this;
  }

  /** `#attribute = :attribute` for each entry. */
  setAttributes(attributes: Record<string, unknown>) {
    for (const [attribute, v] of Object.entries(attributes)) this.set(this.name(attribute), attribute, v);
    return this;
  }

  /** `path = <expression>`: an expression of the item's own attributes (`if_not_exists`, a sum). */
  setTo(path: string, expression: string) {
    this.sets.push(`${path} = ${expression}`);
    return this;
  }

  remove(...paths: string[]) {
    for (const path of paths) if (!this.removes.includes(path)) this.removes.push(path);
    return this;
  }

  /** The index attributes a change sets and removes (the entity modules' `IndexChanges`). */
  index(changes: { set: Record<string, string>; remove: string[] }) {
    this.setAttributes(changes.set);
    return this.remove(...changes.remove.map((attribute) => this.name(attribute)));
  }

  when(condition: string) {
    this.conditions.push(condition);
    return this;
  }

  /** The UpdateItem's parts, without the table name (the caller's adapter adds it). */
  build(key: { PK: string; SK: string }) {
    const clauses = [
      ...(this.sets.length ? [`SET ${this.sets.join(', ')}`] : []),
      ...(this.removes.length ? [`REMOVE ${this.removes.join(', ')}`] : []),
    ];
    return {
      Key: key,
      UpdateExpression: clauses.join(' '),
      ...(this.conditions.length ? { ConditionExpression: this.conditions.join(' AND ') } : {}),
      ExpressionAttributeNames: this.names,
      ExpressionAttributeValues: this.values,
    };
  }
}

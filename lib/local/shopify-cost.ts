/**
 * The requested cost of a GraphQL document, as Shopify's Admin API calculates it before it runs one
 * (https://shopify.dev/docs/apps/build/apis/graphql-admin/rate-limits, "Cost calculation"): a scalar or
 * an enum costs 0, an object 1, a connection 2 plus `first` (or `last`) times the cost of one node, so
 * nested connections multiply; a mutation costs 10 plus what its payload selects. A list that takes
 * `first` (Order.fulfillments, Fulfillment.trackingInfo) is counted like a connection, an upper bound.
 * Shopify refuses a document over `SHOPIFY_MAX_QUERY_COST` (MAX_COST_EXCEEDED) without running it.
 * Used by the simulator (it refuses the same way) and by the test that keeps every document the
 * storeplatform_b adapter sends under the limit.
 */
import {
  type FieldNode,
  type GraphQLCompositeType,
  type GraphQLField,
  type GraphQLNamedType,
  type GraphQLSchema,
  getNamedType,
  isCompositeType,
  isListType,
  isNonNullType,
  isObjectType,
  Kind,
  type OperationDefinitionNode,
  parse,
  type SelectionSetNode,
  type ValueNode,
} from 'graphql';

/** Shopify's single-query limit. */
export const SHOPIFY_MAX_QUERY_COST = 1000;
const MUTATION_COST = 10;
const CONNECTION_COST = 2;

type Variables = Record<string, unknown>;

const argumentValue = (node: ValueNode, variables: Variables): unknown => {
  if (node.kind === Kind.VARIABLE) return variables[node.name.value];
  if (node.kind === Kind.INT) return Number(node.value);
  return undefined;
};

/** The `first` (or `last`) a field is sized by; undefined when it takes neither. */
const sizeOf = (field: FieldNode, variables: Variables): number | undefined => {
  for (const name of ['first', 'last']) {
    const argument = field.arguments?.find((a) => a.name.value === name);
    const value = argument ? argumentValue(argument.value, variables) : undefined;
    if (typeof value === 'number') return value;
  }
  return undefined;
};

const isConnection = (type: GraphQLNamedType) => isObjectType(type) && type.name.endsWith('Connection');

const fieldsOf = (type: GraphQLCompositeType): Record<string, GraphQLField<unknown, unknown>> =>
  'getFields' in type ? type.getFields() : {};

export class ShopifyCost {
  constructor(
    private readonly schema: GraphQLSchema,
    private readonly variables: Variables,
  ) {}

  /** The cost of a selection made on `type`: the sum of its fields' (fragments: their selections, summed). */
  selection(type: GraphQLCompositeType, set: SelectionSetNode | undefined): number {
    let cost = 0;
    for (const selection of set?.selections ?? []) {
      if (selection.kind === Kind.FIELD) {
        const field = fieldsOf(type)[selection.name.value];
        if (field) cost += this.field(field, selection);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        const on = selection.typeCondition ? this.schema.getType(selection.typeCondition.name.value) : type;
        if (on && isCompositeType(on)) cost += this.selection(on, selection.selectionSet);
      }
    }
    return cost;
  }

  /** One field: 0 for a scalar or an enum, 1 plus its selection for an object, a connection by its size. */
  field(field: GraphQLField<unknown, unknown>, node: FieldNode): number {
    const type = getNamedType(field.type);
    if (!isCompositeType(type)) return 0;
    const size = sizeOf(node, this.variables);
    if (isConnection(type)) return CONNECTION_COST + (size ?? 0) * this.node(type, node.selectionSet);
    const unwrapped = isNonNullType(field.type) ? field.type.ofType : field.type;
    const one = 1 + this.selection(type, node.selectionSet);
    if (isListType(unwrapped) && size !== undefined) return CONNECTION_COST + size * one;
    return one;
  }

  /** One node of a connection: `nodes` or `edges { node }`, 1 plus its selection; `pageInfo` is in the 2. */
  private node(connection: GraphQLCompositeType, set: SelectionSetNode | undefined): number {
    let cost = 0;
    for (const selection of set?.selections ?? []) {
      if (selection.kind !== Kind.FIELD) continue;
      const name = selection.name.value;
      const field = fieldsOf(connection)[name];
      if (!field || name === 'pageInfo') continue;
      const type = getNamedType(field.type);
      if (!isCompositeType(type)) continue;
      if (name === 'nodes') cost += 1 + this.selection(type, selection.selectionSet);
      else if (name === 'edges') {
        const inner = selection.selectionSet?.selections.find((s) => s.kind === Kind.FIELD && s.name.value === 'node');
        const nodeField = fieldsOf(type).node;
        const nodeType = nodeField ? getNamedType(nodeField.type) : undefined;
        if (inner?.kind === Kind.FIELD && nodeType && isCompositeType(nodeType)) {
          cost += 1 + this.selection(nodeType, inner.selectionSet);
        }
      } else cost += this.field(field, selection);
    }
    return cost;
  }
}

/**
 * The requested cost of a document's operation (the one named, or its only one) with these variables:
 * a query's root fields as fields, a mutation 10 plus its payload's selection.
 */
export const requestedQueryCost = (
  schema: GraphQLSchema,
  document: string,
  variables: Variables = {},
  operationName?: string,
): number => {
  const operations = parse(document).definitions.filter(
    (d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION,
  );
  const operation = operations.find((o) => operationName === undefined || o.name?.value === operationName);
  if (!operation) throw new Error('no operation to cost');
  const defaults: Variables = {};
  for (const definition of operation.variableDefinitions ?? []) {
    if (definition.defaultValue) defaults[definition.variable.name.value] = argumentValue(definition.defaultValue, {});
  }
  const cost = new ShopifyCost(schema, { ...defaults, ...variables });
  if (operation.operation === 'mutation') {
    const root = schema.getMutationType();
    if (!root) return 0;
    return operation.selectionSet.selections.reduce((sum, selection) => {
      if (selection.kind !== Kind.FIELD) return sum;
      const field = root.getFields()[selection.name.value];
      const payload = field ? getNamedType(field.type) : undefined;
      const inner = payload && isCompositeType(payload) ? cost.selection(payload, selection.selectionSet) : 0;
      return sum + MUTATION_COST + inner;
    }, 0);
  }
  const root = operation.operation === 'query' ? schema.getQueryType() : schema.getSubscriptionType();
  return root ? cost.selection(root, operation.selectionSet) : 0;
};

/** Shopify's answer to a document over the limit: HTTP 200, MAX_COST_EXCEEDED, nothing run. */
export const maxCostExceededBody = (cost: number) => ({
  errors: [
    {
      message:
        `Query cost is ${cost}, which exceeds the single query max cost limit (${SHOPIFY_MAX_QUERY_COST}).\n\n` +
        'See https://shopify.dev/concepts/about-apis/rate-limits for more information on how the\n' +
        'cost of a query is calculated.\n\nTo query larger amounts of data with fewer limits, bulk operations ' +
        'should be used instead.\nSee https://shopify.dev/tutorials/perform-bulk-operations-with-admin-api ' +
        'for usage details.\n',
      extensions: {
        code: 'MAX_COST_EXCEEDED',
        cost,
        maxCost: SHOPIFY_MAX_QUERY_COST,
        documentation: 'https://shopify.dev/api/usage/rate-limits',
      },
    },
  ],
});

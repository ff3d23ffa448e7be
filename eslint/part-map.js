// @ts-check
/**
 * The project's part map as a lint rule: which folder may import which. A relative import is
 * resolved against the importing file, so `../cloud/x.ts` from `service/` (the ledger) and
 * `./cloud/x.ts` from `service/` (the worker's ledger client) are told apart by where they
 * land, not by how they are spelled. Options: `{ forbid: [{ path, message }], packages:
 * [{ name, message }] }`; `path` is a folder or file relative to the repository root.
 */
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));

/** @param {string} file @param {string} specifier */
function landing(file, specifier) {
  return relative(root, join(dirname(file), specifier))
    .split(sep)
    .join('/');
}

/** @param {string} target @param {string} path */
function isUnder(target, path) {
  return path.endsWith('/') ? target.startsWith(path) : target === path;
}

/** @type {import('eslint').Rule.RuleModule} */
const allowedImports = {
  meta: {
    type: 'problem',
    docs: { description: 'Each folder imports only the parts the part map allows it.' },
    schema: [
      {
        type: 'object',
        properties: {
          forbid: {
            type: 'array',
            items: {
              type: 'object',
              properties: {
                path: { type: 'string' },
                except: { type: 'array', items: { type: 'string' } },
                message: { type: 'string' },
              },
              required: ['path', 'message'],
              additionalProperties: false,
            },
          },
          packages: {
            type: 'array',
            items: {
              type: 'object',
              properties: { name: { type: 'string' }, message: { type: 'string' } },
              required: ['name', 'message'],
              additionalProperties: false,
            },
          },
        },
        additionalProperties: false,
      },
    ],
    messages: { forbidden: '{{specifier}}: {{message}}' },
  },
  create(context) {
    const { forbid = [], packages = [] } = context.options[0] ?? {};
    const importer = relative(root, context.filename).split(sep).join('/');

    /** @param {import('estree').Node} node @param {unknown} source */
    function check(node, source) {
      if (typeof source !== 'string') return;
      if (source.startsWith('.')) {
        const target = landing(context.filename, source);
        const rule = forbid.find(
          (/** @type {{ path: string, except?: string[] }} */ f) =>
            isUnder(target, f.path) && !(f.except ?? []).includes(importer),
        );
        if (rule) {
          context.report({
            node,
            messageId: 'forbidden',
            data: { specifier: source, message: rule.message },
          });
        }
        return;
      }
      const rule = packages.find(
        (/** @type {{ name: string }} */ p) => source === p.name || source.startsWith(`${p.name}/`),
      );
      if (rule) {
        context.report({
          node,
          messageId: 'forbidden',
          data: { specifier: source, message: rule.message },
        });
      }
    }

    return {
      ImportDeclaration: (node) => check(node, node.source.value),
      ExportNamedDeclaration: (node) => check(node, node.source?.value),
      ExportAllDeclaration: (node) => check(node, node.source.value),
      ImportExpression: (node) =>
        check(node, node.source.type === 'Literal' ? node.source.value : undefined),
      CallExpression: (node) => {
        // require('x'), as the CommonJS preload writes it.
        if (
          node.callee.type === 'Identifier' &&
          node.callee.name === 'require' &&
          node.arguments[0]?.type === 'Literal'
        ) {
          check(node, node.arguments[0].value);
        }
      },
    };
  },
};

export default { rules: { 'allowed-imports': allowedImports } };

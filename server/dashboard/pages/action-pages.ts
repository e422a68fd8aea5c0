// Actions in two steps: a button leads to a confirmation page (GET, changes nothing), whose form POSTs the action
// with the CSRF field; the result page shows what the workflow answered, or why it refused.
import { ACTIONS, type Fields } from '../actions';
import { BadRequestError, NotFoundError, type DashboardContext } from '../context';
import { html, message, page, type Safe } from '../html';

const hidden = (f: Fields): Safe[] => Object.entries(f).map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`);

/** A button that opens the confirmation page of `action` for `fields`. */
export function actionButton(_ctx: DashboardContext, action: string, fields: Fields, label: string): Safe {
  return html`<form class="inline" method="get" action="/actions/${action}">${hidden(fields)}<button type="submit" data-action="${action}">${label}</button></form>`;
}

/** A small form for an action that takes input (the budget): fields are filled in, then confirmed. */
export function actionForm(
  action: string,
  fixed: Fields,
  inputs: Array<{ name: string; label: string; value?: string }>,
  label: string,
): Safe {
  const boxes = inputs.map((i) => html`<label>${i.label} <input name="${i.name}" size="5" value="${i.value ?? ''}"></label> `);
  return html`<form class="inline" method="get" action="/actions/${action}">${hidden(fixed)}${boxes}<button type="submit" data-action="${action}">${label}</button></form>`;
}

const actionOf = (name: string) => {
  const a = ACTIONS[name];
  if (!a) throw new NotFoundError(`no action "${name}" (known: ${Object.keys(ACTIONS).join(', ')})`);
  return a;
};

export function confirmPage(ctx: DashboardContext, name: string, fields: Fields): string {
  const a = actionOf(name);
  const text = a.describe(fields);
  return page(
    'Confirm',
    html`<h1>Confirm</h1><p id="confirm-text">${text}</p>
<form method="post" action="/actions/${name}">${hidden(fields)}<input type="hidden" name="csrf" value="${ctx.csrf}"><button type="submit" id="confirm">Confirm</button> <a href="${a.back(fields)}">Cancel</a></form>`,
  );
}

export async function runAction(ctx: DashboardContext, name: string, fields: Fields): Promise<[number, string]> {
  const a = actionOf(name);
  const back = a.back(fields);
  if (fields.csrf !== ctx.csrf)
    throw new BadRequestError('this form is stale or was not made by this dashboard (bad csrf field): go back, reload and try again', 403);
  const { csrf: _csrf, ...f } = fields;
  try {
    const done = await a.run(ctx, f);
    return [
      200,
      page('Done', html`<h1>Done</h1><div class="msg" id="result" role="status">${done}</div><p><a id="back" href="${back}">Back</a></p>`),
    ];
  } catch (e) {
    if (e instanceof BadRequestError) throw e;
    // Temporal's refusal (a validator's reason, a finished workflow) is in the cause: that is what the researcher needs.
    const err = e as Error & { cause?: Error };
    const why = err.cause?.message && err.cause.message !== err.message ? `${err.message}: ${err.cause.message}` : err.message;
    return [
      409,
      page(
        'Refused',
        html`<h1>Refused</h1>${message(`The workflow did not accept it: ${why}`, 'error')}<p><a id="back" href="${back}">Back</a></p>`,
      ),
    ];
  }
}

// html.js — htm bound to Preact's h: views are tagged templates, so values
// become text nodes or attributes, never markup.
import { h, render } from '../vendor/preact.js';
import htm from '../vendor/htm.js';

export const html = htm.bind(h);
export { render };

// SPDX-License-Identifier: AGPL-3.0-only
//
// Judges one answer against api/openapi.json with ajv, for the answers that
// cannot pass through Prism: the path's template and operation, a declared
// status, its declared headers (required ones present, each value valid),
// its media type, and the content against the declared schema. HEAD has no
// content and the GET answer's media type; a response declared without
// content has none.
'use strict';

const Ajv2020 = require('ajv/dist/2020').default;

function pointerSegment(s) {
	return encodeURIComponent(s.replace(/~/g, '~0').replace(/\//g, '~1'));
}

function mediaMatches(received, declared) {
	const parse = s => {
		const [essence, ...params] = s.split(';').map(x => x.trim());
		const p = {};
		for (const kv of params) {
			const eq = kv.indexOf('=');
			if (eq > 0) {
				p[kv.slice(0, eq).trim().toLowerCase()] = kv.slice(eq + 1).trim();
			}
		}
		return { essence: essence.toLowerCase(), params: p };
	};
	const r = parse(received);
	const d = parse(declared);
	return r.essence === d.essence && Object.entries(d.params).every(([k, v]) => r.params[k] === v);
}

class Description {
	constructor(doc) {
		this.doc = doc;
		this.ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
		this.ajv.addSchema({ ...doc, $id: 'openapi' });
		this.templates = Object.keys(doc.paths).map(t => ({
			template: t,
			re: new RegExp(`^${t.replace(/[.]/g, '\\.').replace(/\{[^}]+\}/g, '[^/]+')}$`),
			literal: !t.includes('{'),
		}));
	}

	// The path template a raw request path belongs to, or null.
	route(path) {
		const hit = this.templates.find(t => t.literal && t.re.test(path)) ||
			this.templates.find(t => !t.literal && t.re.test(path));
		return hit ? hit.template : null;
	}

	// Follows a $ref to components; returns [object, pointer].
	deref(obj, pointer) {
		if (obj && obj.$ref) {
			const parts = obj.$ref.replace(/^#\//, '').split('/');
			let o = this.doc;
			for (const p of parts) {
				o = o[p.replace(/~1/g, '/').replace(/~0/g, '~')];
			}
			return [o, `#/${parts.map(p => encodeURIComponent(p)).join('/')}`];
		}
		return [obj, pointer];
	}

	schemaErrors(pointer, value) {
		const v = this.ajv.getSchema(`openapi${pointer}`);
		if (!v) {
			return [`no schema at ${pointer}`];
		}
		if (v(value)) {
			return [];
		}
		return v.errors.slice(0, 5).map(e => `${e.instancePath || '/'} ${e.message}` +
			(e.params && e.params.allowedValues ? ` (${e.params.allowedValues.join(', ')})` : ''));
	}

	// The declared response for an answer: [response, pointer, label] or a
	// string saying why there is none.
	responseFor(method, path, status) {
		const template = this.route(path);
		if (template === null) {
			// no route: the router's 404, as every other 404 is written
			return status === 404
				? [...this.deref({ $ref: '#/components/responses/NotFound' }), '(no route)']
				: `no path in the description matches ${path}`;
		}
		const item = this.doc.paths[template];
		let m = method.toLowerCase();
		if (!item[m]) {
			if (status !== 405) {
				return `${method} ${template} is not described, yet answered ${status}`;
			}
			// every operation of a path shares its 405: read it from the first
			m = ['get', 'post'].find(x => item[x]);
		}
		const resp = item[m].responses[String(status)];
		if (!resp) {
			return `${method} ${template}: status ${status} is not declared ` +
				`(declared: ${Object.keys(item[m].responses).join(', ')})`;
		}
		const base = `#/paths/${pointerSegment(template)}/${m}/responses/${status}`;
		return [...this.deref(resp, base), `${method} ${template}`];
	}

	headerErrors(resp, pointer, headers) {
		const out = [];
		for (const [name, h0] of Object.entries(resp.headers || {})) {
			const [h, ptr] = this.deref(h0, `${pointer}/headers/${pointerSegment(name)}`);
			const value = headers[name.toLowerCase()];
			if (value === undefined) {
				if (h.required) {
					out.push(`header ${name} is required, absent`);
				}
				continue;
			}
			const typed = h.schema.type === 'integer' && /^\d+$/.test(value) ? Number(value) : value;
			for (const e of this.schemaErrors(`${ptr}/schema`, typed)) {
				out.push(`header ${name}: ${JSON.stringify(value)} ${e}`);
			}
		}
		return out;
	}

	// Every way the answer departs from the description; [] when none.
	// opts.length200: for a 304, the Content-Length of the matching 200.
	check(method, path, answer, opts = {}) {
		const found = this.responseFor(method, path, answer.status);
		if (typeof found === 'string') {
			return [found];
		}
		const [resp, pointer] = found;
		const out = this.headerErrors(resp, pointer, answer.headers);
		const ct = answer.headers['content-type'];
		if (answer.status === 304) {
			// RFC 9110 8.6 and 15.4.5, for GET and HEAD alike
			if (answer.body.length !== 0) {
				out.push(`304 with ${answer.body.length} bytes of content`);
			}
			if (ct !== undefined) {
				out.push(`304 carries Content-Type: ${ct}`);
			}
			const cl = answer.headers['content-length'];
			if (cl !== undefined && (opts.length200 === undefined || Number(cl) !== opts.length200)) {
				out.push(`304 carries Content-Length: ${cl}, the 200's is ${opts.length200}`);
			}
			return out;
		}
		if (method === 'HEAD') {
			if (answer.body.length !== 0) {
				out.push('HEAD answered with content');
			}
			const get = this.responseFor('GET', path, answer.status);
			const media = typeof get === 'string' ? [] : Object.keys(get[0].content || {});
			if (media.length > 0 && !(ct && media.some(mt => mediaMatches(ct, mt)))) {
				out.push(`HEAD Content-Type ${ct} is not the GET answer's (${media.join(', ')})`);
			}
			return out;
		}
		const content = resp.content || {};
		const media = Object.keys(content);
		if (media.length === 0) {
			if (answer.body.length !== 0) {
				out.push(`${answer.status} is declared without content, yet has ${answer.body.length} bytes`);
			}
			return out;
		}
		const mt = ct && media.find(m => mediaMatches(ct, m));
		if (!mt) {
			out.push(`Content-Type ${ct} is not one declared (${media.join(', ')})`);
			return out;
		}
		let value = answer.body.toString('utf8');
		if (/[/+]json$/.test(mt.split(';')[0].trim())) {
			try {
				value = JSON.parse(value);
			} catch (e) {
				out.push(`content is not JSON: ${e.message}`);
				return out;
			}
		}
		for (const e of this.schemaErrors(`${pointer}/content/${pointerSegment(mt)}/schema`, value)) {
			out.push(`content ${e}`);
		}
		return out;
	}
}

module.exports = { Description, mediaMatches };

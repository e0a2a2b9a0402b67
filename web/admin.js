// ragd UI — the admin page (/admin): users (add, disable/enable), teams (add, members: add, change role, remove), API keys
// (create — the key is shown once —, list by prefix, revoke) and the audit log (filters, paging), over
// /api/admin/*. Only an admin key sees it; any other is told so and nothing is asked of the admin API.
// Everything from the API is inserted as text.
'use strict';

(() => {
  const { el, api, ApiError, t } = ragd;
  const $ = (id) => document.getElementById(id);
  const json = (method, body) => ({ method, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  const enc = encodeURIComponent;

  function errText(e) { return e instanceof ApiError ? e.human() : String(e && e.message || e); }
  const { when } = ragd;

  /** guarded runs fn, showing its error in the section's error line. */
  async function guarded(errId, fn) {
    $(errId).hidden = true;
    try {
      await fn();
    } catch (e) {
      $(errId).textContent = errText(e);
      $(errId).hidden = false;
    }
  }

  // ---- users ----
  async function loadUsers() {
    const res = await api('/api/admin/users');
    $('user-rows').replaceChildren(...(res.users || []).map((u) => {
      const b = el('button', { type: 'button', class: 'secondary', 'data-action': u.disabled ? 'enable' : 'disable' }, t(u.disabled ? 'admin.enable' : 'admin.disable'));
      b.addEventListener('click', () => guarded('users-error', async () => {
        await api('/api/admin/users/' + enc(u.name), json('PUT', { disabled: !u.disabled }));
        await loadUsers();
      }));
      return el('tr', { 'data-user': u.name },
        el('td', { 'data-label': t('admin.name') }, u.name),
        el('td', { 'data-label': t('admin.teams') }, (u.teams || []).join(', ')),
        el('td', { 'data-label': t('admin.state'), 'data-state': u.disabled ? 'disabled' : 'active' }, t(u.disabled ? 'admin.disabled' : 'admin.active')),
        el('td', {}, b));
    }));
  }
  $('user-form').addEventListener('submit', (e) => {
    e.preventDefault();
    guarded('users-error', async () => {
      const body = { name: $('user-name').value.trim() };
      const team = $('user-team').value.trim();
      if (team) { body.team = team; body.role = $('user-role').value; }
      await api('/api/admin/users', json('POST', body));
      $('user-name').value = '';
      await Promise.all([loadUsers(), loadTeams()]);
    });
  });

  // ---- teams ----
  let openTeam = '';
  async function loadTeams() {
    const res = await api('/api/admin/teams');
    $('team-rows').replaceChildren(...(res.teams || []).map((team) => {
      const b = el('button', { type: 'button', class: 'secondary', 'data-action': 'members' }, t('admin.members'));
      b.addEventListener('click', () => guarded('teams-error', () => showMembers(team.name)));
      return el('tr', { 'data-team': team.name },
        el('td', { 'data-label': t('admin.team') }, team.name),
        el('td', { 'data-label': t('admin.members') }, String(team.members)),
        el('td', {}, b));
    }));
  }
  async function showMembers(team) {
    const res = await api('/api/admin/teams/' + enc(team) + '/members');
    openTeam = team;
    $('members-heading').textContent = t('admin.membersOf', { team });
    const member = (m) => '/api/admin/teams/' + enc(team) + '/members/' + enc(m.user);
    const rows = (res.members || []).map((m) => {
      // The role changes as soon as another is picked; Remove takes the user out of the team.
      const role = el('select', { 'aria-label': t('admin.roleOf', { user: m.user }), 'data-action': 'role' },
        el('option', { value: 'member', selected: m.role === 'member' }, t('admin.member')),
        el('option', { value: 'admin', selected: m.role === 'admin' }, t('admin.teamAdmin')));
      role.addEventListener('change', () => guarded('teams-error', async () => {
        await api(member(m), json('PUT', { role: role.value }));
        await showMembers(team);
      }));
      const remove = el('button', { type: 'button', class: 'secondary', 'data-action': 'remove' }, t('admin.removeMember'));
      remove.addEventListener('click', () => guarded('teams-error', async () => {
        await api(member(m), { method: 'DELETE' });
        await Promise.all([showMembers(team), loadTeams(), loadUsers()]);
      }));
      return el('li', { 'data-member': m.user }, el('span', { class: 'who' }, m.user), role, remove);
    });
    $('member-list').replaceChildren(...(rows.length ? rows : [el('li', { class: 'empty' }, t('admin.noMembers'))]));
    $('members').hidden = false;
  }
  $('team-form').addEventListener('submit', (e) => {
    e.preventDefault();
    guarded('teams-error', async () => {
      await api('/api/admin/teams', json('POST', { name: $('team-name').value.trim() }));
      $('team-name').value = '';
      await loadTeams();
    });
  });
  $('member-form').addEventListener('submit', (e) => {
    e.preventDefault();
    guarded('teams-error', async () => {
      await api('/api/admin/teams/' + enc(openTeam) + '/members/' + enc($('member-user').value.trim()), json('PUT', { role: $('member-role').value }));
      $('member-user').value = '';
      await Promise.all([showMembers(openTeam), loadTeams(), loadUsers()]);
    });
  });

  // ---- keys ----
  function keyState(k) {
    if (k.revoked_at) return 'revoked';
    if (k.expires_at && new Date(k.expires_at) < new Date()) return 'expired';
    return 'active';
  }
  async function loadKeys() {
    const res = await api('/api/admin/keys');
    $('key-rows').replaceChildren(...(res.keys || []).map((k) => {
      const state = keyState(k);
      const cells = [
        el('td', { 'data-label': t('admin.prefix'), class: 'mono' }, k.prefix),
        el('td', { 'data-label': t('admin.user') }, k.user),
        el('td', { 'data-label': t('admin.scopes') }, (k.scopes || []).map((s) => (ragdI18n.has('scope.' + s) ? t('scope.' + s) : s)).join(', ')),
        el('td', { 'data-label': t('admin.state') }, t('admin.' + state)),
        el('td', { 'data-label': t('admin.created') }, when(k.created_at)),
        el('td', { 'data-label': t('admin.expires') }, k.expires_at ? when(k.expires_at) : t('admin.never')),
      ];
      const actions = el('td', {});
      if (state === 'active') {
        const b = el('button', { type: 'button', class: 'secondary danger', 'data-action': 'revoke' }, t('admin.revoke'));
        b.addEventListener('click', () => {
          if (!confirm(t('admin.revokeConfirm', { prefix: k.prefix, user: k.user }))) return;
          guarded('keys-error', async () => {
            await api('/api/admin/keys/' + enc(k.prefix), { method: 'DELETE' });
            await loadKeys();
          });
        });
        actions.append(b);
      }
      return el('tr', { 'data-prefix': k.prefix, 'data-state': state }, ...cells, actions);
    }));
  }
  $('key-form').addEventListener('submit', (e) => {
    e.preventDefault();
    guarded('keys-error', async () => {
      const scopes = ['read', 'write', 'admin'].filter((s) => $('key-' + s).checked);
      const body = { user: $('key-user').value.trim(), scopes };
      const exp = $('key-expires').value.trim();
      if (exp) body.expires_in = exp;
      const made = await api('/api/admin/keys', json('POST', body));
      // Shown this once: it is not kept anywhere in the page after "Done" or a reload.
      $('new-key').textContent = made.key;
      $('new-key-box').hidden = false;
      await loadKeys();
    });
  });
  $('new-key-done').addEventListener('click', () => {
    $('new-key').textContent = '';
    $('new-key-box').hidden = true;
  });

  // ---- audit log: newest first; "older" asks for the events before the last one shown ----
  function auditQuery(before) {
    const p = new URLSearchParams();
    for (const f of ['principal', 'action', 'target', 'outcome']) {
      const v = $('a-' + f).value.trim();
      if (v) p.set(f, v);
    }
    const since = $('a-since').value, until = $('a-until').value;
    if (since) p.set('since', new Date(since + 'T00:00:00').toISOString());
    if (until) p.set('until', new Date(until + 'T23:59:59').toISOString());
    p.set('limit', '50');
    if (before) p.set('before', String(before));
    return p.toString();
  }
  async function loadAudit(before) {
    await guarded('audit-error', async () => {
      const res = await api('/api/admin/audit?' + auditQuery(before));
      $('audit-rows').replaceChildren(...(res.events || []).map((ev) => el('tr', { 'data-id': ev.id, 'data-action': ev.action, 'data-outcome': ev.outcome },
        el('td', { 'data-label': t('admin.time') }, when(ev.at)),
        el('td', { 'data-label': t('admin.principal') }, ev.principal || ''),
        el('td', { 'data-label': t('admin.action') }, ev.action || ''),
        el('td', { 'data-label': t('admin.target') }, [ev.target, ...(ev.documents || [])].filter(Boolean).join(', ')),
        el('td', { 'data-label': t('admin.outcome') }, (ragdI18n.has('admin.' + ev.outcome) ? t('admin.' + ev.outcome) : ev.outcome) + (ev.status ? ' (' + ev.status + ')' : '')),
        el('td', { 'data-label': t('admin.client') }, ev.client || ''))));
      const older = $('audit-older');
      older.disabled = !res.next_before;
      older.dataset.before = res.next_before || '';
      $('audit-first').disabled = !before;
    });
  }
  let debounce = 0;
  $('audit-filters').addEventListener('input', () => {
    clearTimeout(debounce);
    debounce = setTimeout(() => loadAudit(0), 250);
  });
  $('audit-filters').addEventListener('submit', (e) => e.preventDefault());
  $('audit-older').addEventListener('click', () => loadAudit(Number($('audit-older').dataset.before)));
  $('audit-first').addEventListener('click', () => loadAudit(0));

  async function start() {
    const p = await ragd.me();
    if (!p || !p.admin) {
      $('admin-refused').textContent = p ? t('admin.notAdmin', { principal: p.principal }) : t('admin.signIn');
      $('admin-refused').hidden = false;
      return;
    }
    $('admin').hidden = false;
    await Promise.all([
      guarded('users-error', loadUsers),
      guarded('teams-error', loadTeams),
      guarded('keys-error', loadKeys),
      loadAudit(0),
    ]);
  }
  ragd.renderStatus($('model-status'));
  start();
})();

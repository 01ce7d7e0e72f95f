"""The manage view in a real headless Chromium against a real `remem serve` on loopback.

Each test signs in through the form, walks pages as a person would, and checks the outcome
through the API (the same guarded service) as well as on the page.
"""

from __future__ import annotations

import json

from remem.providers.tokenizers import get_tokenizer
from ui.kit import SCRIPT, item_id, shot, sign_in


def test_admin_walks_every_page_at_desktop_and_narrow_widths(ctx, site):
    requested: list[str] = []
    console_errors: list[str] = []
    ctx.on("request", lambda req: requested.append(req.url))
    ctx.on("console", lambda msg: msg.type == "error" and console_errors.append(msg.text))
    page = sign_in(ctx, site, "admin")
    assert page.url.endswith("/ui/items")  # the memory exists: its items first
    assert page.locator("[data-role]").inner_text() == "admin"
    assert page.locator("tr[data-item]").count() == 25  # one page of 33 current items
    shot(page, "items")
    page.click("text=Next page")
    page.wait_for_load_state()  # the click waits for the navigation to start, not to load
    assert page.locator("tr[data-item]").count() == 8
    page.goto(site.base + "/ui/items?text=VEGETARIAN")  # key, value, quote, scope
    assert page.locator("tr[data-item] td.value").all_inner_texts() == ["vegetarian"]
    page.goto(site.base + "/ui/items?scope=user:alice&key=home_city&status=all")
    assert page.locator("tr[data-item]").count() == 2
    page.click("tr[data-item] >> text=home_city >> nth=0")
    page.wait_for_load_state()
    assert page.locator("svg.timeline g[data-bar]").count() == 2  # one bar per version
    assert page.locator("[data-quote]").inner_text() in ("I live in Paris.",
                                                         "We moved to Lyon last spring.")
    shot(page, "item")
    for path, name, must in [("/ui/conflicts", "conflicts", "Conflicts"),
                             ("/ui/recall", "recall", "Recall playground"),
                             ("/ui/runs", "runs", "Derive and job runs"),
                             ("/ui/status", "status", "Status of m1"),
                             ("/ui/memories", "memories", "Config of m1")]:
        page.goto(site.base + path)
        assert must in page.content(), path
        shot(page, name)
    page.goto(site.base + "/ui/status")
    assert page.locator("[data-verify]").inner_text().startswith("ok")
    head = site.api("GET", "/memory/m1/status").json()["head_seq"]
    assert page.locator("[data-head]").inner_text() == str(head)
    page.set_viewport_size({"width": 390, "height": 800})
    for path in ("/ui/items", f"/ui/items/{item_id(site, 'user:alice', 'home_city')}"):
        page.goto(site.base + path)
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), path
    shot(page, "item-narrow")
    assert requested and all(u.startswith(site.base + "/ui") for u in requested)  # offline
    assert console_errors == []  # no CSP violation, no missing asset
    assert page.goto(site.base + "/ui/items?meta=no_equals_sign").status == 400


def test_the_token_lives_only_in_an_httponly_strict_cookie(ctx, site):
    page = sign_in(ctx, site, "writer")
    [cookie] = [c for c in ctx.cookies() if c["name"] == "remem_ui"]
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and cookie["path"] == "/ui"
    assert page.evaluate("document.cookie") == ""  # invisible to scripts
    assert site.tokens["writer"] not in page.url and site.tokens["writer"] not in page.content()
    page.click("text=Sign out")
    assert page.url.endswith("/ui/login")
    page.goto(site.base + "/ui/items")
    assert page.url.endswith("/ui/login")  # signed out: back to the form
    r = ctx.request.post(site.base + "/ui/login", max_redirects=0,  # login CSRF: pre != cookie
                         form={"token": site.tokens["admin"], "pre": "forged"})
    assert r.status == 403 and not [c for c in ctx.cookies() if c["name"] == "remem_ui"]
    page.goto(site.base + "/ui/login")
    page.fill("#token", "rmm_0000000000000000_wrong")
    page.click("button[type=submit]")
    assert "not accepted" in page.locator(".error").inner_text() or \
        "token" in page.locator(".error").inner_text().lower()


def test_a_reader_sees_no_write_actions_and_forged_posts_are_refused(ctx, site):
    target = item_id(site, "user:alice", "diet")
    page = sign_in(ctx, site, "reader")
    page.goto(site.base + f"/ui/items/{target}")
    assert page.locator("[data-value]").inner_text() == "vegetarian"
    assert page.locator("[data-actions]").count() == 0
    assert page.locator("main form[method=post]").count() == 0
    assert page.locator("nav >> text=Runs").count() == 0  # memory-wide pages not offered
    csrf = page.evaluate("document.querySelector('input[name=csrf]').value")
    for action, form in [("archive", {"csrf": csrf}), ("forget", {"csrf": csrf,
                                                                   "confirm": "diet"}),
                         ("correct", {"csrf": csrf, "value": "omnivore",
                                      "expected_revision": "1"}),
                         ("archive", {}), ("forget", {"confirm": "diet"})]:
        r = ctx.request.post(site.base + f"/ui/items/{target}/{action}", form=form,
                             max_redirects=0)
        assert r.status == 403, (action, form, r.status)
        code = "permission_denied" if "csrf" in form else "csrf_rejected"
        assert f"<code data-code>{code}</code>" in r.text(), (action, form)
    api = site.api("GET", f"/memory/m1/items/{target}").json()
    assert (api["status"], api["value"]) == ("current", "vegetarian")  # nothing changed
    # a writer of another scope gets the service's answer too: not visible, nothing done
    other = sign_in(ctx.browser.new_context(), site, "bob")
    bob_csrf = other.evaluate("document.querySelector('input[name=csrf]').value")
    r = ctx.request.post(site.base + f"/ui/items/{target}/archive", form={"csrf": bob_csrf},
                         max_redirects=0)  # another session's CSRF token
    assert r.status == 403 and "<code data-code>csrf_rejected</code>" in r.text()
    r = other.context.request.post(site.base + f"/ui/items/{target}/archive",
                                   form={"csrf": bob_csrf}, max_redirects=0)
    assert r.status in (403, 404)
    assert site.api("GET", f"/memory/m1/items/{target}").json()["status"] == "current"
    other.context.close()


def test_a_writer_corrects_archives_restores_and_forgets_with_a_report(ctx, site):
    site.remember("user:alice", "pet_name", "Rex", who="writer")
    target = item_id(site, "user:alice", "pet_name")
    page = sign_in(ctx, site, "writer")
    page.goto(site.base + f"/ui/items/{target}")
    page.fill("#value", "Fido")
    page.click("text=Correct at revision")
    assert page.locator("[data-value]").inner_text() == "Fido"
    current = item_id(site, "user:alice", "pet_name")
    assert page.url.endswith(current)
    page.click("button:text('Archive')")
    assert page.locator("[data-status]").inner_text() == "archived"
    page.click("button:text('Restore')")
    assert page.locator("[data-status]").inner_text() == "current"
    page.fill("#confirm", "wrong_key")
    page.click("button:text('Forget')")
    assert "nothing was erased" in page.locator("[data-error]").inner_text()
    assert site.api("GET", f"/memory/m1/items/{current}").status_code == 200
    page.fill("#confirm", "pet_name")
    page.click("button:text('Forget')")
    state = page.locator("[data-state]").inner_text()
    assert state.startswith("Erasure completed") or state.startswith("Erasure pending")
    surfaces = page.locator("tr[data-surface]")
    assert surfaces.count() >= 3
    report_rows = {surfaces.nth(i).get_attribute("data-surface"): surfaces.nth(i).inner_text()
                   for i in range(surfaces.count())}
    assert any("pending" in t or "erased" in t for t in report_rows.values())
    shot(page, "forget-report")
    assert site.api("GET", f"/memory/m1/items/{current}").status_code == 404


def test_a_stored_script_renders_as_text_and_never_runs(ctx, site):
    dialogs: list[str] = []
    target = item_id(site, "user:alice", "nickname")
    page = sign_in(ctx, site, "writer")
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(site.base + f"/ui/items/{target}")
    assert page.locator("[data-value]").inner_text() == SCRIPT
    assert page.locator("[data-quote]").inner_text() == f"Call me {SCRIPT}"
    assert page.evaluate("document.querySelectorAll('main script').length") == 0
    page.goto(site.base + "/ui/items?key=nickname")
    assert page.locator("td.value").first.inner_text() == SCRIPT
    page.goto(site.base + "/ui/recall")
    page.fill("#query", "nickname")
    page.click("button:text('Recall')")
    assert SCRIPT in page.locator("[data-text]").inner_text()
    page.wait_for_timeout(200)
    assert dialogs == []


def test_conflicts_are_shown_side_by_side_and_resolved_by_keeping_one(ctx, site):
    for value in ("Berlin", "Madrid"):
        r = site.api("POST", "/memory/m1/apply", "writer", json={
            "entity": "user:alice", "attribute": "work_city", "value": value,
            "kind": "profile_slot", "operation": "assert"})
        assert r.status_code == 200, r.text
    page = sign_in(ctx, site, "admin")
    page.goto(site.base + "/ui/conflicts")
    group = page.locator("section.group", has_text="work_city")
    assert group.locator("article.card").count() == 2
    boxes = [group.locator("article.card").nth(i).bounding_box() for i in range(2)]
    assert abs(boxes[0]["y"] - boxes[1]["y"]) < 1 and boxes[0]["x"] < boxes[1]["x"]
    shot(page, "conflicts-open")
    keep = group.locator("article.card", has_text="Madrid")
    kept_id = keep.get_attribute("data-item")
    keep.locator("button:text('Keep this one')").click()
    assert page.locator("[data-resolved]").inner_text() == f"Resolved: kept {kept_id}."
    assert page.locator("section.group", has_text="work_city").count() == 0
    state = site.api("GET", "/memory/m1/inspect",
                     params={"scope": "user:alice", "key": "work_city"}).json()
    assert (state["state"], state["value"]) == ("current", "Madrid")


def test_a_writer_sees_no_resolve_button_and_a_forged_resolve_is_refused(ctx, site):
    for value in ("tea", "coffee"):
        site.api("POST", "/memory/m1/apply", "writer", json={
            "entity": "user:alice", "attribute": "drink", "value": value,
            "kind": "profile_slot", "operation": "assert"})
    page = sign_in(ctx, site, "writer")
    page.goto(site.base + "/ui/conflicts")
    group = page.locator("section.group", has_text="drink")
    assert group.locator("article.card").count() == 2
    assert group.locator("button").count() == 0
    gid = group.get_attribute("data-group")
    keep = group.locator("article.card").first.get_attribute("data-item")
    csrf = page.evaluate("document.cookie === '' && "
                         "document.querySelector('form input[name=csrf]').value")
    r = ctx.request.post(site.base + f"/ui/conflicts/{gid}/resolve",
                         form={"csrf": csrf, "keep": keep}, max_redirects=0)
    assert r.status == 403
    assert site.api("GET", "/memory/m1/conflicts", "writer").json() != []


def test_the_recall_playground_counts_the_same_tokens_as_the_api(ctx, site):
    page = sign_in(ctx, site, "writer")
    page.goto(site.base + "/ui/recall")
    page.fill("#query", "where does alice live")
    page.fill("input[name=budget_tokens]", "400")
    page.click("button:text('Recall')")
    shown_tokens = int(page.locator("[data-tokens]").inner_text())
    shown_text = page.locator("[data-model-text]").inner_text()
    shot(page, "recall-result")
    r = site.api("POST", "/memory/m1/recall", "writer", json={
        "scopes": ["user:alice"], "query": "where does alice live", "budget_tokens": 400})
    assert r.status_code == 200
    doc = json.loads(r.text)
    assert shown_text == doc["text"]  # exactly the model-facing text the API returns
    assert shown_tokens == get_tokenizer("o200k_base").count(doc["text"]) <= 400
    assert "Lyon" in [it["value"] for it in doc["items"]]
    assert page.locator("[data-recalled]", has_text="Lyon").count() == 1
    assert page.locator("[data-truncated]").inner_text() == ("yes" if doc["truncated"]
                                                             else "no")
    for channel, state in doc["coverage"].items():
        assert page.locator(f"[data-coverage={channel}]").inner_text() == f"{channel} {state}"


def test_a_recall_the_service_refuses_is_explained_on_the_form(ctx, site):
    page = sign_in(ctx, site, "reader")
    page.goto(site.base + "/ui/recall")
    page.fill("#query", "anything")
    page.fill("input[name=scopes]", "user:bob")  # not the reader's scope
    page.click("button:text('Recall')")
    assert page.locator("[data-error]").count() == 1
    assert page.locator("[data-model-text]").count() == 0
    assert page.locator("#query").input_value() == "anything"


def test_config_errors_show_inline_and_change_nothing(ctx, site):
    page = sign_in(ctx, site, "admin")
    page.goto(site.base + "/ui/memories")
    before = site.api("GET", "/memories/m1").json()["config"]
    page.fill("#config", '{"no_such_setting": 1}')
    page.click("button:text('Save config')")
    assert page.locator("[data-error]").count() == 1
    assert '"no_such_setting": 1' in page.locator("#config").input_value()  # kept for editing
    page.fill("#config", "{not json")
    page.click("button:text('Save config')")
    assert "not valid JSON" in page.locator("[data-error]").inner_text()
    assert site.api("GET", "/memories/m1").json()["config"] == before
    page.fill("#config", json.dumps(before))
    page.click("button:text('Save config')")
    assert page.locator("[data-saved]").inner_text() == "Config saved."


def test_an_admin_creates_its_memory_from_the_memories_page(ctx, site):
    page = sign_in(ctx, site, "fresh_admin")
    assert page.url.endswith("/ui/memories")  # m2 does not exist yet
    assert "not created yet" in page.locator("main").inner_text()
    page.click("button:text('Create memory')")
    assert "Config of m2" in page.content()
    assert site.api("GET", "/memories/m2", "fresh_admin").status_code == 200


def test_every_action_is_reachable_by_keyboard(ctx, site):
    target = item_id(site, "user:alice", "diet")
    page = sign_in(ctx, site, "writer")
    page.goto(site.base + f"/ui/items/{target}")
    reached = []
    for _ in range(80):
        page.keyboard.press("Tab")
        reached.append(page.evaluate("document.activeElement.id || "
                                     "document.activeElement.textContent.trim()"))
        if reached[-1] == "Forget":
            break
    assert reached[0] == "Skip to content"
    assert {"Items", "Recall", "value", "Archive", "confirm", "Forget"} <= set(reached)


def test_a_receipt_shows_its_phases_and_due_jobs_run_from_the_runs_page(ctx, site):
    r = site.api("POST", "/memory/m1/observe", "writer", json={
        "scope": "user:alice", "text": "I moved to Porto last week.", "source_id": "chat-9"})
    assert r.status_code == 202, r.text
    receipt = r.json()["receipt_id"]
    page = sign_in(ctx, site, "writer")
    page.goto(site.base + f"/ui/runs?receipt={receipt}")
    api_phase = site.api("GET", f"/memory/m1/receipts/{receipt}", "writer").json()["phase"]
    assert page.locator("[data-phase]").get_attribute("data-phase") == api_phase
    assert page.locator("#h-runs").count() == 0  # runs are memory-wide: admins only
    bob = ctx.browser.new_context()
    other = sign_in(bob, site, "bob")
    assert other.goto(site.base + f"/ui/runs?receipt={receipt}").status == 404
    bob.close()
    admin = sign_in(ctx.browser.new_context(), site, "admin")
    admin.goto(site.base + "/ui/runs")
    admin.click("button:text('Run due jobs now')")
    assert admin.locator("[data-outcomes]").count() == 1
    admin.goto(site.base + f"/ui/runs?receipt={receipt}")
    after = site.api("GET", f"/memory/m1/receipts/{receipt}", "writer").json()["phase"]
    assert admin.locator("[data-phase]").get_attribute("data-phase") == after
    assert after in ("processed", "available")
    shot(admin, "runs-after")
    admin.context.close()


def test_every_page_and_form_without_a_session_leads_to_sign_in_and_does_nothing(ctx, site):
    from remem.ui import admin, items, recall

    target = item_id(site, "user:alice", "diet")
    before = site.api("GET", "/memory/m1/status").json()["head_seq"]
    routes = [(m, r.path) for mod in (admin, items, recall) for r in mod.router.routes
              for m in r.methods if r.path not in ("/ui/login",)]
    assert len(routes) >= 15  # every page and form of the view
    for method, path in routes:
        url = site.base + path.replace("{item_id}", target).replace("{group_id}", "grp_x")
        r = ctx.request.fetch(url, method=method, max_redirects=0,
                              form={"csrf": "x"} if method == "POST" else None)
        assert (r.status, r.headers.get("location")) == (303, "/ui/login"), (method, path)
    assert site.api("GET", "/memory/m1/status").json()["head_seq"] == before

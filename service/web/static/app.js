// "N similar hidden": the cluster's other members that match the same query, from the JSON API, under the hit.
const SHOWN = 100;  // the search API's largest size

function showList(button, list) {
  list.hidden = false;
  button.setAttribute("aria-expanded", "true");
}

function showError(button, list, message) {  // not marked loaded: the next click asks again
  const li = document.createElement("li");
  li.className = "similar-error";
  li.setAttribute("role", "alert");
  li.textContent = message;
  list.replaceChildren(li);
  showList(button, list);
}

async function load(button, list) {
  const index = document.body.dataset.index;
  const hitId = button.closest(".hit").dataset.id;
  const params = new URLSearchParams({q: document.getElementById("hits").dataset.q, cluster: button.dataset.cluster, size: SHOWN});
  let resp;
  try {
    resp = await fetch(`/v1/indices/${encodeURIComponent(index)}/search?${params}`);
  } catch {
    showError(button, list, "the search failed: no answer from the service");
    return;
  }
  const data = await resp.json().catch(() => null);  // a proxy's error page is no JSON
  if (!resp.ok || !data || typeof data !== "object") {
    showError(button, list, (data && data.error && data.error.message) || `the search failed (${resp.status})`);
    return;
  }
  list.replaceChildren();
  const others = (data.hits || []).filter((h) => h.id !== hitId).slice(0, SHOWN);
  for (const h of others) {
    const li = document.createElement("li");
    li.className = "similar-item";
    li.dataset.id = h.id;
    const title = document.createElement("span");
    title.lang = "zh";  // a document's words; the page's own are English
    title.textContent = h.title || h.id;
    li.append(title, ` (${h.id})` + (h.duplicate_of ? ` · duplicate of ${h.duplicate_of}` : ""));
    list.appendChild(li);
  }
  const more = (data.total || 0) - 1 - others.length;
  if (more > 0) {
    const li = document.createElement("li");
    li.className = "similar-more";
    li.textContent = `and ${more} more`;
    list.appendChild(li);
  }
  list.dataset.loaded = "1";
  showList(button, list);
}

document.addEventListener("click", async (event) => {
  const button = event.target.closest("button.expand");
  if (!button) return;
  const list = document.getElementById(button.getAttribute("aria-controls")) || button.nextElementSibling;
  if (list.getAttribute("aria-busy") === "true") return;  // a click while loading: the answer is on its way
  if (!list.hidden) {
    list.hidden = true;
    button.setAttribute("aria-expanded", "false");
    return;
  }
  if (list.dataset.loaded) {
    showList(button, list);
    return;
  }
  list.setAttribute("aria-busy", "true");
  try {
    await load(button, list);
  } catch {
    showError(button, list, "the search failed: its answer could not be read");
  } finally {
    list.removeAttribute("aria-busy");
  }
});

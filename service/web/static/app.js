// "N similar hidden": the cluster's other members that match the same query, from the JSON API, under the hit.
const SHOWN = 100;  // the search API's largest size
document.addEventListener("click", async (event) => {
  const button = event.target.closest("button.expand");
  if (!button) return;
  const list = button.nextElementSibling;
  if (!list.hidden) { list.hidden = true; return; }
  if (!list.dataset.loaded) {
    const index = document.body.dataset.index;
    const hitId = button.closest(".hit").dataset.id;
    const params = new URLSearchParams({q: document.getElementById("hits").dataset.q, cluster: button.dataset.cluster, size: SHOWN});
    const resp = await fetch(`/v1/indices/${encodeURIComponent(index)}/search?${params}`);
    const data = await resp.json();
    if (!resp.ok) {  // not marked loaded: the next click asks again
      const li = document.createElement("li");
      li.className = "similar-error";
      li.textContent = (data.error && data.error.message) || `the search failed (${resp.status})`;
      list.replaceChildren(li);
      list.hidden = false;
      return;
    }
    const others = (data.hits || []).filter((h) => h.id !== hitId).slice(0, SHOWN);
    for (const h of others) {
      const li = document.createElement("li");
      li.className = "similar-item";
      li.dataset.id = h.id;
      li.textContent = `${h.title || h.id} (${h.id})` + (h.duplicate_of ? ` · duplicate of ${h.duplicate_of}` : "");
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
  }
  list.hidden = false;
});

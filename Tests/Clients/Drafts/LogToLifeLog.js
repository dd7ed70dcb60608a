// The LifeLog document's Drafts action (seed 004, "Drafts Action"), as written: not edited.
// Drafts Action: Log to LifeLog
const apiURL = "https://YOUR_VAL_TOWN_URL/api/entries";
const apiKey = "YOUR_API_KEY"; // Store in Drafts credentials

const entry = {
  id: UUID.make(),
  timestamp: new Date().toISOString(),
  recorded_at: new Date().toISOString(),
  source: "drafts",
  device_id: device.model,
  category: draft.tags.length > 0 ? draft.tags[0] : "note",
  data: {
    text: draft.content,
    tags: draft.tags
  }
};

const http = HTTP.create();
const response = http.request({
  url: apiURL,
  method: "POST",
  headers: {
    "Content-Type": "application/json",
    "Authorization": `Bearer ${apiKey}`
  },
  data: entry
});

if (response.success) {
  app.displaySuccessMessage("Logged!");
} else {
  app.displayErrorMessage("Failed to log");
  context.fail();
}

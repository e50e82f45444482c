package admin

import (
	"encoding/json"
	"net/http"
	"strings"
)

// The key-created page hands over working code: each snippet is filled
// with the new key and the URL users reach the service at, ready to paste.

// snippet is one copy-ready block of the key-created page.
type snippet struct {
	ID, Title, Lang, Note, Code string
}

// publicURL is the configured public URL, else the scheme and host the
// request came with.
func (h *Handler) publicURL(r *http.Request) string {
	if h.PublicURL != "" {
		return strings.TrimRight(h.PublicURL, "/")
	}
	scheme := "http"
	if h.OverHTTPS != nil && h.OverHTTPS(r) || r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// jsString quotes s as a JSON (and so JavaScript and Go) string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func keySnippets(base, key string) []snippet {
	q := "Our packing station cannot keep up and orders ship late"
	mcpConfig, _ := json.MarshalIndent(map[string]any{"mcpServers": map[string]any{"assistant": map[string]any{
		"type": "http", "url": base + "/mcp", "headers": map[string]string{"Authorization": "Bearer " + key},
	}}}, "", "  ")
	return []snippet{
		{ID: "snippet-shell", Title: "Shell: keep the key in KEY", Lang: "sh",
			Note: "Then the curl examples of the docs work as written.",
			Code: "export KEY=" + shellQuote(key) + "\nexport ASSISTANT_URL=" + shellQuote(base)},
		{ID: "snippet-curl", Title: "curl", Lang: "sh",
			Code: "curl -s " + shellQuote(base+"/api/v1/chat") + " \\\n  -H " + shellQuote("Authorization: Bearer "+key) +
				" \\\n  -H 'Content-Type: application/json' \\\n  -d " + shellQuote(`{"message":"`+q+`","mode":"operator"}`)},
		{ID: "snippet-go", Title: "Go (github.com/constraintlab/assistant/client)", Lang: "go",
			Code: "c := client.New(" + jsString(base) + ", client.WithAPIKey(" + jsString(key) + "))\n" +
				"resp, err := c.Chat(ctx, client.ChatRequest{Message: " + jsString(q) + "})\n" +
				"if err != nil {\n\treturn err\n}\nfmt.Println(resp.Response, resp.Confidence.Level)"},
		{ID: "snippet-typescript", Title: "TypeScript (@constraintlab/assistant)", Lang: "ts",
			Code: "import { AssistantClient } from \"@constraintlab/assistant\";\n\n" +
				"const client = new AssistantClient({ baseURL: " + jsString(base) + ", apiKey: " + jsString(key) + " });\n" +
				"const resp = await client.chat({ message: " + jsString(q) + " });\n" +
				"console.log(resp.response, resp.confidence.level);"},
		{ID: "snippet-openai", Title: "OpenAI SDK, at the OpenAI-compatible facade", Lang: "js",
			Note: "Any OpenAI client works with this base URL and key; the models are assistant-operator, -customer, -support and -success.",
			Code: "import OpenAI from \"openai\";\n\n" +
				"const openai = new OpenAI({ baseURL: " + jsString(base+"/api/v1/openai") + ", apiKey: " + jsString(key) + " });\n" +
				"const answer = await openai.responses.create({ model: \"assistant-operator\", input: " + jsString(q) + " });\n" +
				"console.log(answer.output_text);"},
		{ID: "snippet-mcp", Title: "MCP client configuration", Lang: "json",
			Note: "For clients configured with an mcpServers map (file and key names differ by client; see docs/integrations.md).",
			Code: string(mcpConfig)},
	}
}

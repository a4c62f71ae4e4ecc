// Package report renders results for people and for tools: campaign tables
// as terminal text, markdown, CSV and JSON, and a self-contained HTML report
// whose charts are drawn by Apache ECharts, embedded in the file so that it
// opens offline.
package report

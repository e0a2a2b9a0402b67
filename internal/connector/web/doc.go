// Package web is the "web" source kind — a site crawled from a start URL or a sitemap, within one host, a
// depth and a page limit, honouring robots.txt — and Get, the fetch of one URL that it and URL ingest share:
// every request goes through the SSRF-guarded client it is given (internal/netguard), with a size limit,
// conditional requests (ETag, Last-Modified) and the response's content type mapped to an extractor.
package web

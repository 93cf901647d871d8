package status

// Chart and Short are the page's chart and byte formatting, for tests.
var (
	Chart = chart
	Short = short
)

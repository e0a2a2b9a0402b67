// Package extractive is the offline answerer: it builds an answer from the retrieved passages themselves,
// quoting the sentences that best answer the question, each cited with its passage's [n].
package extractive

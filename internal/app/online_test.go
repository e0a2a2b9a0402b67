//go:build !ragd_offline

package app_test

const offline = false

# This package will contain the spiders of your crawlfw project.
#
# Create one with: crawlfw genspider <name> <domain>

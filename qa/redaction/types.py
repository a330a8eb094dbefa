"""The entity types and languages of the redactor: a module without Presidio or spaCy, which the
models, settings checks and admin import (loading spaCy takes a second a process)."""

LANGUAGES = ("es", "en")

# Entity types (Presidio's names where Presidio has the type).
CREDIT_CARD = "CREDIT_CARD"
CARD_EXPIRY = "CARD_EXPIRY"
CARD_SECURITY_CODE = "CARD_SECURITY_CODE"
AR_DNI = "AR_DNI"
AR_CUIT = "AR_CUIT"
ES_NIF = "ES_NIF"
ES_NIE = "ES_NIE"
CL_RUT = "CL_RUT"
MX_CURP = "MX_CURP"
AR_CBU = "AR_CBU"
IBAN_CODE = "IBAN_CODE"
EMAIL_ADDRESS = "EMAIL_ADDRESS"
PHONE_NUMBER = "PHONE_NUMBER"
US_SSN = "US_SSN"
PERSON = "PERSON"
LOCATION = "LOCATION"

PATTERN_TYPES = (
    CREDIT_CARD, CARD_EXPIRY, CARD_SECURITY_CODE, AR_DNI, AR_CUIT, ES_NIF, ES_NIE, CL_RUT, MX_CURP,
    AR_CBU, IBAN_CODE, EMAIL_ADDRESS, PHONE_NUMBER, US_SSN,
)
MODEL_TYPES = (PERSON, LOCATION)
ALL_TYPES = PATTERN_TYPES + MODEL_TYPES

# Where two findings overlap, the one whose format is the more certain wins: a checksum beats a
# pattern, a pattern beats a phone number (phonenumbers accepts many digit runs), and any beats a name.
PRIORITY = {
    CREDIT_CARD: 10, AR_CBU: 10, IBAN_CODE: 10, AR_CUIT: 10, ES_NIF: 10, ES_NIE: 10, CL_RUT: 10,
    MX_CURP: 10, EMAIL_ADDRESS: 9, US_SSN: 8, CARD_SECURITY_CODE: 7, CARD_EXPIRY: 7, AR_DNI: 6,
    PHONE_NUMBER: 5, PERSON: 2, LOCATION: 1,
}
